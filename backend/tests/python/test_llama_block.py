"""A small Llama-like block (embedding, RMSNorm, causal attention, SwiGLU MLP, cross-entropy,
backward) trains on neuron with no op falling back to the CPU, and matches the CPU."""

import pytest
import torch
import torch.nn.functional as F
import torch_neuronsim as ns
from torch import nn


class Block(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.norm1 = nn.RMSNorm(dim, eps=1e-6)
        self.norm2 = nn.RMSNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.gate = nn.Linear(dim, 4 * dim, bias=False)
        self.up = nn.Linear(dim, 4 * dim, bias=False)
        self.down = nn.Linear(4 * dim, dim, bias=False)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.drop = nn.Dropout(0.0)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(attn.transpose(1, 2).reshape(b, t, d)))
        h = self.norm2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return self.head(x)


@pytest.mark.parametrize(
    "dtype,tol", [(torch.float32, dict(rtol=1e-4, atol=1e-5)), (torch.bfloat16, dict(rtol=5e-2, atol=5e-2))], ids=str
)
def test_block_trains_natively_and_matches_cpu(dtype, tol):
    torch.manual_seed(0)
    cpu_model = Block().to(dtype)
    dev_model = Block().to(dtype)
    dev_model.load_state_dict(cpu_model.state_dict())
    dev_model.to("neuron")
    ids = torch.randint(0, 64, (2, 7))
    targets = torch.randint(0, 64, (2, 7))

    ns.clear_op_tracking()
    logits = dev_model(ids.to("neuron"))
    loss = F.cross_entropy(logits.float().flatten(0, 1), targets.to("neuron").flatten())
    loss.backward()
    assert ns.get_fallback_ops() == {}, "ops fell back to the CPU"
    executed = ns.get_executed_ops()
    for op in ["aten::embedding", "aten::bmm", "aten::mm", "aten::_softmax", "aten::_log_softmax",
               "aten::embedding_dense_backward", "aten::nll_loss_backward"]:
        assert executed.get(op, 0) > 0, op

    cpu_logits = cpu_model(ids)
    cpu_loss = F.cross_entropy(cpu_logits.float().flatten(0, 1), targets.flatten())
    cpu_loss.backward()
    torch.testing.assert_close(logits.cpu(), cpu_logits, **tol)
    torch.testing.assert_close(loss.cpu(), cpu_loss, **tol)
    for (name, p), (_, q) in zip(dev_model.named_parameters(), cpu_model.named_parameters()):
        assert p.grad.device.type == "neuron", name
        torch.testing.assert_close(p.grad.cpu(), q.grad, **tol, msg=name)


def test_optimizer_step_and_dropout_stay_native():
    torch.manual_seed(0)
    model = Block().to("neuron")
    model.drop.p = 0.1
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    ids = torch.randint(0, 64, (2, 7), device="neuron")
    ns.clear_op_tracking()
    for _ in range(2):
        optimizer.zero_grad()
        model(ids).float().logsumexp(-1).mean().backward()
        optimizer.step()
    assert ns.get_fallback_ops() == {}
    assert ns.get_executed_ops()["aten::native_dropout"] == 2
