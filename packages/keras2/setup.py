# setup.cfg holds the metadata; a setup.py (not PEP 621) keeps the package installable by the
# pip and setuptools that still support Python 3.6, the interpreter CNTK 2.7 needs.
from setuptools import setup

setup()
