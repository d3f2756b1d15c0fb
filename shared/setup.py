# setup.cfg holds the metadata; a setup.py (not PEP 621) keeps the package installable by the
# setuptools that still supports Python 3.6, the interpreter CNTK needs.
from setuptools import setup

setup()
