from ._adrev import definitions
