"""Distributed tests for the collmc pytest plugin (`pytest -p collmc.pytest`), run by python/tests/test_pytest.py.
Each runs as two gloo ranks; the plugin joins the default group before the test and records it."""
import pytest
import torch
import torch.distributed as dist


def two_groups(rank: int, opposite: bool) -> None:
    g1 = dist.new_group([0, 1])
    g2 = dist.new_group([0, 1])
    for g in ((g2, g1) if opposite and rank == 1 else (g1, g2)):
        dist.all_reduce(torch.ones(2), group=g)


@pytest.mark.collmc_distributed(world=2, open_orders=False)
def test_same_order(rank):
    two_groups(rank, opposite=False)


@pytest.mark.collmc_distributed(world=2)
def test_opposite_orders(rank):
    two_groups(rank, opposite=True)


@pytest.mark.collmc_distributed(world=2)
def test_same_order_other_orders_opened(rank):
    two_groups(rank, opposite=False)
