"""Transposed convolutions and Conv3d as layers and functions, against torch: initialization
from the same seed, outputs, gradients, grad_fn names, reprs, state_dict keys, output_size and
torch's error words. (tests/ops/test_conv.py checks the op's gradients against finite
differences and torch over a grid of strides, paddings, groups and dilations.)"""
from __future__ import annotations


import pytest

from tests.support.parity import needs_torch, same_output

pytestmark = needs_torch


def test_layers_initialize_print_and_train_as_torchs():
    out = same_output("""
    torch.manual_seed(0)
    up = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)
    print(up, up.weight.shape, list(up.state_dict()))
    x = torch.randn(2, 4, 5, 5, requires_grad=True)
    y = up(x)
    print(y.shape, y.grad_fn.name(), y.sum(dim=(0, 2, 3)))
    (y ** 2).mean().backward()
    print(x.grad[0, 0, :2], up.weight.grad[0, 0], up.bias.grad)
    for layer in (torch.nn.ConvTranspose1d(3, 2, 4, stride=3, bias=False), torch.nn.ConvTranspose3d(2, 3, (1, 2, 3)),
                  torch.nn.Conv3d(2, 3, 3, padding=1, stride=(1, 2, 1)), torch.nn.ConvTranspose2d(4, 4, 2, 2)):
        print(layer, [tuple(p.shape) for p in layer.parameters()], layer.weight.sum())
    x = torch.randn(1, 3, 5)
    print(torch.nn.ConvTranspose1d(3, 2, 4, stride=3)(x))
    print(torch.nn.Conv3d(2, 3, 2)(torch.randn(2, 3, 4, 3)).shape)
    """)
    assert "ConvolutionBackward0" in out


def test_output_size_picks_the_output_padding():
    same_output("""
    torch.manual_seed(1)
    down, up = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1), torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1)
    x = torch.randn(1, 4, 12, 13)
    h = down(x)
    print(h.shape, up(h).shape, up(h, output_size=x.size()).shape, up(h[0], output_size=[12, 14]).shape)
    for size in ([14, 14], [1, 2, 3]):
        try:
            up(h, output_size=size)
        except ValueError as e:
            print(e)
    try:
        torch.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")
    except ValueError as e:
        print(e)
    """)


@pytest.mark.parametrize("call", [
    "F.conv_transpose2d(torch.ones(2, 4, 5, 5), torch.ones(3, 2, 3, 3))",
    "F.conv_transpose2d(torch.ones(4, 5, 5, 5, 5), torch.ones(4, 2, 3, 3))",
    "F.conv_transpose2d(torch.ones(2, 4, 5, 5), torch.ones(4, 2, 3, 3), stride=2, output_padding=2)",
    "F.conv_transpose1d(torch.ones(2, 4, 5), torch.ones(4, 2, 3), output_padding=1)",
    "F.conv_transpose3d(torch.ones(1, 4, 3, 3, 3), torch.ones(4, 2, 3, 3, 3), output_padding=1)",
    "F.conv_transpose2d(torch.ones(2, 4, 5, 5), torch.ones(4, 2, 3, 3), groups=3)",
    "F.conv_transpose2d(torch.ones(2, 4, 5, 5), torch.ones(4, 2, 3, 3), bias=torch.ones(3))",
    "F.conv_transpose2d(torch.ones(2, 4, 5, 5), torch.ones(4, 2, 3, 3), groups=2, bias=torch.ones(2))",
    "F.conv_transpose2d(torch.ones(2, 4, 5, 5), torch.ones(4, 2, 3, 3).double())",
    "F.conv_transpose1d(torch.ones(2, 4, 5), torch.ones(4, 2, 3), padding=-1)",
    "F.conv_transpose1d(torch.ones(2, 4, 5), torch.ones(4, 2, 3), stride=0)",
    "F.conv_transpose1d(torch.ones(2, 4, 5), torch.ones(4, 2, 3), groups=0)",
    "F.conv_transpose1d(torch.ones(2, 4, 5), torch.ones(4, 2, 3), output_padding=-1)",
    "F.conv_transpose1d(torch.ones(2, 4, 5), torch.ones(4, 2, 3), stride=(1, 2))",
    "F.conv_transpose2d(torch.ones(2, 4, 5, 5), torch.ones(4, 2, 3, 3, 3))",
    "F.conv3d(torch.ones(1, 4, 3, 3, 3), torch.ones(2, 4, 2, 2))",
    "F.conv2d(torch.ones(1, 4, 3, 3), torch.ones(2, 4, 2, 2, 2))",
    "F.conv1d(torch.ones(1, 4, 3), torch.ones(2, 4, 2, 2))",
    "F.conv_transpose1d(torch.ones(1, 4, 3), torch.ones(4, 2, 2, 2))",
])
def test_errors_in_torchs_words(call):
    out = same_output(f"""
    F = torch.nn.functional
    try:
        {call}
    except Exception as e:
        print(type(e).__name__, e)
    """)
    assert out.startswith("RuntimeError")


def test_a_small_dcgan_trains_as_torchs():
    """The shape of PyTorch's DCGAN tutorial, scaled down: a ConvTranspose2d generator and a Conv2d
    discriminator, initialized by apply(weights_init), trained two steps with BCELoss and Adam."""
    same_output("""
    nn = torch.nn
    nz, ngf, ndf = 4, 3, 3

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    torch.manual_seed(999)
    netG = nn.Sequential(nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                         nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(ndf, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    netG.apply(weights_init)
    netD.apply(weights_init)
    print(netG, netD)
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    real = torch.rand(5, 1, 8, 8) * 2 - 1
    for step in range(2):
        netD.zero_grad()
        label = torch.full((5,), 1.0, dtype=torch.float)
        errD_real = criterion(netD(real).view(-1), label)
        errD_real.backward()
        fake = netG(torch.randn(5, nz, 1, 1))
        label.fill_(0.0)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        optimizerD.step()
        netG.zero_grad()
        label.fill_(1.0)
        errG = criterion(netD(fake).view(-1), label)
        errG.backward()
        optimizerG.step()
        print(step, round((errD_real + errD_fake).item(), 5), round(errG.item(), 5), fake.shape, fake.grad_fn.name())
    """)
