"""Per-device random number generators."""

import torch


def draw(device="neuron", n=32):
    return torch.randn(n, device=device).cpu()


def test_manual_seed_reproduces():
    torch.neuron.manual_seed(123)
    a = draw()
    torch.neuron.manual_seed(123)
    assert torch.equal(a, draw())
    assert not torch.equal(a, draw())


def test_every_random_factory_uses_the_device_generator():
    factories = [
        lambda: torch.rand(16, device="neuron"),
        lambda: torch.randn(16, device="neuron"),
        lambda: torch.randint(0, 100, (16,), device="neuron"),
        lambda: torch.empty(16, device="neuron").bernoulli_(0.5),
        lambda: torch.empty(16, device="neuron").exponential_(),
        lambda: torch.nn.functional.dropout(torch.ones(16, device="neuron"), 0.5),
    ]
    for make in factories:
        torch.neuron.manual_seed(5)
        a = make().cpu()
        torch.manual_seed(999)  # reseeding the CPU alone changes nothing on the device ...
        torch.neuron.manual_seed(5)
        b = make().cpu()
        assert torch.equal(a, b)


def test_cpu_generator_does_not_move_device_state():
    torch.neuron.manual_seed(1)
    a = draw()
    torch.neuron.manual_seed(1)
    torch.randn(100)  # CPU draw in between
    assert torch.equal(a, draw())


def test_state_is_per_device():
    torch.neuron.manual_seed_all(7)
    on0 = draw("neuron:0")
    draw("neuron:0")  # advance device 0 only
    on1 = draw("neuron:1")
    assert torch.equal(on0, on1)
    with torch.neuron.device(1):
        torch.neuron.manual_seed(8)  # current device only
    assert torch.neuron.initial_seed() == 7
    with torch.neuron.device(1):
        assert torch.neuron.initial_seed() == 8


def test_torch_manual_seed_seeds_every_device():
    torch.manual_seed(42)
    a0, a1 = draw("neuron:0"), draw("neuron:1")
    torch.manual_seed(42)
    assert torch.equal(a0, draw("neuron:0")) and torch.equal(a1, draw("neuron:1"))


def test_get_set_rng_state():
    state = torch.neuron.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    a = draw()
    torch.neuron.set_rng_state(state)
    assert torch.equal(a, draw())
    states = torch.neuron.get_rng_state_all()
    assert len(states) == torch.neuron.device_count()
    b = draw("neuron:1")
    torch.neuron.set_rng_state_all(states)
    assert torch.equal(b, draw("neuron:1"))


def test_seed_is_non_deterministic():
    torch.neuron.seed()
    first = torch.neuron.initial_seed()
    torch.neuron.seed()
    assert torch.neuron.initial_seed() != first


def test_explicit_generator_object():
    gen = torch.Generator(device="neuron")
    assert gen.device == torch.device("neuron", 0)
    gen.manual_seed(3)
    a = torch.randn(8, device="neuron", generator=gen).cpu()
    gen.manual_seed(3)
    assert torch.equal(a, torch.randn(8, device="neuron", generator=gen).cpu())
    clone = torch.Generator(device="neuron").set_state(gen.get_state())
    assert torch.equal(torch.rand(4, device="neuron", generator=gen).cpu(),
                       torch.rand(4, device="neuron", generator=clone).cpu())


def test_random_ops_that_fall_back_draw_from_the_device_generator():
    """multinomial, cauchy_, ... have no native kernel: the CPU fallback runs them with the
    device's generator (or the neuron generator passed), not torch's CPU generator."""
    ops = [
        lambda **g: torch.multinomial(torch.tensor([0.2, 0.3, 0.5], device="neuron"), 16, True, **g),
        lambda **g: torch.empty(16, device="neuron").cauchy_(**g),
        lambda **g: torch.empty(16, device="neuron").geometric_(0.3, **g),
        lambda **g: torch.empty(16, device="neuron").log_normal_(**g),
        lambda **g: torch.randperm(16, device="neuron", **g),
    ]
    for op in ops:
        torch.neuron.manual_seed(7)
        torch.default_generator.manual_seed(1)
        a = op().cpu()
        torch.neuron.manual_seed(7)
        torch.default_generator.manual_seed(2)  # the CPU generator must not matter
        assert torch.equal(a, op().cpu())
        assert not torch.equal(a, op().cpu())
        g = torch.Generator("neuron").manual_seed(3)
        first = op(generator=g).cpu()
        g.manual_seed(3)
        assert torch.equal(first, op(generator=g).cpu())
