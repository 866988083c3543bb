"""Read-only projections of the folded state and the branch. A view never writes."""
