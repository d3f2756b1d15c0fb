"""The report layer: result files in, tables, charts, the Rosetta page, agreement, scaling,
baseline comparison and the end-of-sweep summary out. Reads result.json files only."""
