"""The `slow` mark: the shared suites' tests a framework declares too slow for every commit
(conf/framework/<fw>.yaml, `slow_tests`), which its `<env>_extended` session runs."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "slow: a test its framework declares too slow for "
        "every commit (nox -s <env>_extended runs it)",
    )
