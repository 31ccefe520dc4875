"""Imported by a fork server only (the first module it preloads; nothing else imports it): the
server dies with the attnsvm process that started it, and each process it forks dies with the
server from its first instruction, before it reads its work (PR_SET_PDEATHSIG, see `supervise`).
Without this a fork server outlives a killed attnsvm for as long as any of its children holds
its liveness pipe, and a child still starting up holds it for good."""

import os

from attnsvm.claims.supervise import die_with_parent

die_with_parent()
os.register_at_fork(after_in_child=die_with_parent)
