"""torch.amp as training scripts meet it on the CPU: a GradScaler that scales the loss, unscales the
gradients, skips the step whose gradients hold an inf and backs off its scale, grows it after
growth_interval good steps, and its state_dict; GradScaler and autocast turning themselves off (with
torch's warnings) where CUDA is missing or the dtype is one CPU autocast does not take; an autocast
that would be on is refused (gradviz runs ops in their inputs' dtypes); bfloat16 can be named."""
import pytest

import gradviz
from tests.support.parity import needs_torch, same_output


@needs_torch
def test_an_enabled_grad_scaler_scales_unscales_skips_and_updates_as_torchs():
    same_output("""
        s = torch.amp.GradScaler('cpu', init_scale=4.0, growth_interval=2)
        print(s.is_enabled(), s.get_scale(), s.state_dict())
        w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
        opt = torch.optim.SGD([w], lr=0.1)
        for i in range(4):
            loss = (w * w).sum() * (float('inf') if i == 1 else 1.0)
            scaled = s.scale(loss)
            print(scaled, scaled.grad_fn.name())
            scaled.backward()
            s.unscale_(opt)
            print(w.grad, s.step(opt), w)
            s.update()
            print(s.get_scale(), s._get_growth_tracker())
            opt.zero_grad()
        print(s.state_dict(), s.scale([torch.ones(1), (torch.ones(2),)]))
        s.scale((w * w).sum()).backward()
        for bad in (lambda: s.step(opt, closure=lambda: 0), lambda: (s.unscale_(opt), s.unscale_(opt)),
                    lambda: (s.step(opt), s.unscale_(opt))):
            try:
                bad()
            except RuntimeError as e:
                print(e)
        s.update()
        t = torch.amp.GradScaler('cpu')
        t.load_state_dict(s.state_dict())
        print(t.state_dict(), t.get_scale())
        s.update(3.0)
        print(s.get_scale())
    """)


@needs_torch
def test_grad_scaler_and_autocast_turn_themselves_off_where_torchs_do():
    same_output("""
        s = torch.cuda.amp.GradScaler(enabled=True)
        loss = torch.ones(1, requires_grad=True) * 2
        w = torch.nn.Parameter(torch.ones(1))
        opt = torch.optim.SGD([w], lr=1.0)
        (w * 3).sum().backward()
        print(s.is_enabled(), s.get_scale(), s.state_dict(), s.scale(loss) is loss, s.step(opt), w, s.update())
        print(torch.amp.GradScaler().is_enabled(), torch.amp.GradScaler('cpu', enabled=False).state_dict())
        with torch.autocast('cpu', dtype=torch.float32):
            print(torch.is_autocast_enabled())
        with torch.autocast('cuda'):
            print(torch.is_autocast_enabled())
        with torch.cuda.amp.autocast(enabled=False), torch.amp.autocast(device_type='cpu', enabled=False):
            print('off')
        f = torch.autocast('cpu', enabled=False)(lambda x: x * 2)
        print(f(torch.ones(1)), torch.bfloat16, {'float32': torch.float32, 'bfloat16': torch.bfloat16}['float32'])
        print(torch.bfloat16.is_floating_point, torch.bfloat16.itemsize)
    """)


def test_an_autocast_that_would_be_on_is_refused_and_bfloat16_tensors_cannot_be_made():
    with pytest.raises(RuntimeError, match="gradviz does not autocast"):
        with gradviz.autocast("cpu", dtype=gradviz.bfloat16):
            pass
    with pytest.raises(TypeError, match="gradviz has no bfloat16 tensors"):
        gradviz.zeros(2, dtype=gradviz.bfloat16)
    with pytest.raises(TypeError, match="gradviz has no bfloat16 tensors"):
        gradviz.ones(2).to(gradviz.bfloat16)
    assert not gradviz.is_autocast_enabled()
