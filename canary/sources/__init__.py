"""Where upstream files come from: a local folder, a wheel on the package index, or GitHub."""
