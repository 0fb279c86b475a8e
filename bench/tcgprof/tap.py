"""TAP output for the tcgprof tests: numbered results, a diagnostic block
under each failure, the plan at the end."""


class Tap:
	def __init__(self):
		self.n = 0
		self.failed = 0

	def ok(self, cond, desc, extra=''):
		self.n += 1
		self.failed += not cond
		print(f'{"ok" if cond else "not ok"} {self.n} - {desc}', flush=True)
		if not cond and extra:
			for line in extra.splitlines():
				print(f'# {line}')
		return cond

	def done(self):
		"""Print the plan; the exit status for the test."""
		print(f'1..{self.n}')
		return 1 if self.failed else 0
