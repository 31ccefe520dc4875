"""counterexamples of attnsvm: one module per result id (see attnsvm.claims.registry)."""
