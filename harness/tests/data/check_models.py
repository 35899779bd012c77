"""Models for check-model's tests: functions returning (model, example inputs)."""

import torch


class Classifier(torch.nn.Module):
    """Linear layers, relu, softmax (native); lgamma (through the CPU fallback); erfinv (skipped by
    the fixture's skip list); cumsum (not in the fixture's run: untested)."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = torch.nn.Linear(8, 16)
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.hidden(x))
        probs = torch.softmax(self.out(h), dim=-1)
        return probs, torch.lgamma(probs + 1), torch.erfinv(probs * 0.5), torch.cumsum(probs, dim=-1)


def classifier():
    torch.manual_seed(0)
    return Classifier(), (torch.randn(3, 8),)


class Spectral(torch.nn.Module):
    """A complex magnitude: complex64 is refused by the device (failing)."""

    def forward(self, x):
        return torch.abs(torch.complex(x, x)) + 1


def spectral():
    return Spectral(), (torch.randn(4, 4),)


def not_a_pair():
    return torch.nn.Linear(2, 2)


class Mlp(torch.nn.Module):
    """Compiles into one graph (check-model --compile)."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))

    def forward(self, x):
        return self.layers(x)


def mlp():
    torch.manual_seed(0)
    return Mlp(), (torch.randn(3, 8),)


class Chatty(Mlp):
    """Prints between its layers: Dynamo breaks the graph there (check-model --compile)."""

    def forward(self, x):
        h = self.layers[0](x)
        print("hidden", tuple(h.shape))
        return self.layers[2](self.layers[1](h))


def chatty():
    torch.manual_seed(0)
    return Chatty(), (torch.randn(3, 8),)


class Misplaced(torch.nn.Module):
    """Planted placement traps: a tensor kept as a plain attribute (.to(device) does not move it), a
    tensor made without device=, a torch.tensor constant, and a .cpu() in the forward."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.scale = torch.ones(8)  # neither a parameter nor a buffer

    def forward(self, x):
        h = self.proj(x)
        bias = torch.zeros(8)  # no device=
        limit = torch.tensor([4.0])  # a constant on the CPU
        peak = h.abs().amax(dim=1).cpu()  # a copy to the CPU in the model
        return h * self.scale.to(h.device) + bias.to(h.device) + (limit * peak).to(h.device).unsqueeze(1)


def misplaced():
    torch.manual_seed(0)
    return Misplaced(), (torch.randn(3, 8),)


def on_the_cpu():
    """A setup that leaves everything on the CPU: the model's function placed its parameters itself
    (one of them on the device), then moved the whole model back."""
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    return model, (torch.randn(2, 8),)


def one_op():
    """A model of one op: each new input shape needs one executable on the device."""
    return torch.nn.ReLU(), (torch.randn(2, 16),)


class Unmovable(torch.nn.Module):
    """Refuses to be moved to another device (check-model: bad input, nothing recorded)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)

    def to(self, *args, **kwargs):
        if args and isinstance(args[0], (str, torch.device)) and torch.device(args[0]).type not in ("cpu", "meta"):
            raise RuntimeError("planted: this model cannot leave the CPU")
        return super().to(*args, **kwargs)


def unmovable():
    return Unmovable(), (torch.randn(2, 4),)
