"""The papers' results, one module per result id in each part: `lemmas` (proof outlines),
`checks` (claims) and `counterexamples` (necessity searches and stored witnesses). In the
repository they are the top-level folders `lemmas/`, `checks/`, `counterexamples/`; installed,
setuptools maps them here (pyproject.toml, `package-dir`), so site-packages holds only `attnsvm`."""
