"""Where the tests' own files are, whichever folder (unit, integration, campaign) a test is in."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
