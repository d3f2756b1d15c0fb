"""bench_torch with one deliberate conversion bug: the CNN's first kernel loads transposed
(H and W swapped, and swapped back on export, so only the outputs show it). The equivalence
checks must catch it; everything else is bench_torch."""

from bench_shared import slots as protocol
from bench_torch.cnn import build_model, predict, train_epoch  # noqa: F401
from bench_torch.cnn import slots as correct_slots


def swap_hw(kernel):
    return kernel.transpose(0, 1, 3, 2).copy()


def slots(model):
    table = correct_slots(model)
    table["conv1.weight"] = protocol.Slot(table["conv1.weight"].keys[0], swap_hw, swap_hw)
    return table
