import pytest

from twlib import datasets

def has_data() -> bool:
    return (datasets.data_dir() / "networks" / "alarm.bif.gz").exists()


needs_data = pytest.mark.skipif(not has_data(), reason="TWLIB_DATA does not point at the benchmark data")


@pytest.fixture(scope="session")
def alarm():
    return datasets.load_network("alarm")


@pytest.fixture(scope="session")
def alarm_5000(alarm):
    return alarm.sample(5000, random_state=1)
