"""The `slow` mark: the shared suites' tests a framework declares too slow for every commit
(conf/framework/<fw>.yaml, `slow_tests`), which its `<env>_extended` session runs."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "slow: a test its framework declares too slow for "
        "every commit (nox -s <env>_extended runs it)",
    )
    config.addinivalue_line(
        "markers",
        "own_process(group): run with the tests of its group in a process of their own "
        "(test_conformance.in_own_process)",
    )
