import math

import numpy as np
import pytest

from twlib import metrics


def test_metrics_on_known_values():
    p = {"a": [0.5, 0.5], "b": [1.0, 0.0, 0.0]}
    q = {"a": [0.25, 0.75], "b": [0.5, 0.5, 0.0]}
    assert metrics.max_absolute_error(p, q) == pytest.approx((0.25 + 0.5) / 2)
    assert metrics.max_absolute_error(p, q, reduce="max") == pytest.approx(0.5)
    assert metrics.absolute_error(p, q) == pytest.approx((0.5 + 1.0) / 2)
    assert metrics.rmse(p, q) == pytest.approx(math.sqrt((2 * 0.25**2 + 2 * 0.5**2) / 5))
    kl_a = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    assert metrics.kl_divergence(p, q) == pytest.approx((kl_a + math.log(2)) / 2)
    h_a = math.sqrt(0.5 * ((math.sqrt(.5) - .5) ** 2 + (math.sqrt(.5) - math.sqrt(.75)) ** 2))
    h_b = math.sqrt(0.5 * ((1 - math.sqrt(.5)) ** 2 + .5))
    assert metrics.hellinger(p, q) == pytest.approx((h_a + h_b) / 2)


def test_kl_zero_conventions_and_identity():
    assert metrics.kl_divergence([0.0, 1.0], [0.5, 0.5]) == pytest.approx(math.log(2))
    assert metrics.kl_divergence([0.5, 0.5], [0.0, 1.0]) == math.inf
    p = np.random.default_rng(0).dirichlet(np.ones(4), size=10)
    for f in (metrics.hellinger, metrics.kl_divergence, metrics.max_absolute_error, metrics.rmse):
        assert f(p, p) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(KeyError, match="missing"):
        metrics.hellinger({"a": [1.0]}, {})
