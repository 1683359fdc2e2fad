"""pytest set-up shared by the tests."""
import signal


def pytest_configure(config):
    """A test run started in the background by a non-interactive shell (``pytest &``, ``nohup``)
    inherits SIGINT ignored (POSIX), and so would every subprocess the Ctrl-C tests interrupt
    (tests/test_cli_interrupt.py, test_diagram.py, test_sweep.py): restore Python's default
    handler, which exec resets to the default action in the children."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
