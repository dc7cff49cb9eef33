"""Shared code for the test suite: classes and functions that test modules and fixtures import.

Fixtures live in tests/conftest.py, where pytest finds them; test modules import only from here (and from the
package under test), never from another test module or from conftest, so each test module can be read, moved or
removed on its own (tests/test_suite_rules.py checks it).
"""
