"""Interfaces: the command line (`cli`), verdict tables (`report`), dataset reports
(`analysis`), pictures (`plotting`), the papers' experiments (`sweeps`)."""
