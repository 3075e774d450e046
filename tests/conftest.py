import pytest

from twlib import datasets


@pytest.fixture(scope="session")
def alarm():
    return datasets.load_network("alarm")


@pytest.fixture(scope="session")
def alarm_5000(alarm):
    return alarm.sample(5000, random_state=1)
