import pytest

from twlib import datasets


@pytest.fixture(scope="session")
def alarm():
    return datasets.load_network("alarm")


@pytest.fixture(scope="session")
def alarm_5000(alarm):
    return alarm.sample(5000, random_state=1)


@pytest.fixture(scope="session")
def child_2000():
    return datasets.load_network("child").sample(2000, random_state=0)
