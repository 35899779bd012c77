"""Gradients land on the device, and the seed example computes what the CPU does."""

import torch


def test_gradients_land_on_device():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(10, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    reference = torch.nn.Sequential(torch.nn.Linear(10, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    reference.load_state_dict(model.state_dict())
    model.to("neuron")
    x = torch.randn(4, 10)
    model(x.to("neuron")).sum().backward()
    reference(x).sum().backward()
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        assert p.grad is not None and p.grad.device.type == "neuron", name
        torch.testing.assert_close(p.grad.cpu(), q.grad)


def test_input_gradient_and_optimizer_step():
    w = torch.randn(3, 3, device="neuron", requires_grad=True)
    x = torch.randn(3, device="neuron", requires_grad=True)
    (w @ x).pow(2).sum().backward()
    assert x.grad.device.type == "neuron" and w.grad.device.type == "neuron"
    before = w.detach().clone()
    torch.optim.SGD([w], lr=0.1).step()
    torch.testing.assert_close(w.detach().cpu(), (before - 0.1 * w.grad).cpu())


def test_seed_example_matches_cpu():
    model = torch.nn.Linear(10, 1)
    cpu_model = torch.nn.Linear(10, 1)
    cpu_model.load_state_dict(model.state_dict())
    model = model.to("neuron")
    input_data = torch.randn(1, 10, device="neuron")
    out = model(input_data)
    assert out.device == torch.device("neuron", 0)
    torch.testing.assert_close(out.cpu(), cpu_model(input_data.cpu()))
