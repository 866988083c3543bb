"""Write-side lifecycle: validate a command against the folded state and produce the events of
one transaction. Nothing here renders or touches git."""
