"""Proposing: findings turned into checks, placed, named, gated and judged on the range's ends.

- `propose.py`: findings turned into proposed checks, one subject per upstream object.
- `inherited.py`: what a subclass's uses of its upstream base propose, on the releases read.
- `forwarded.py`: keywords an upstream function passes on through its `**kwargs` to a callee.
- `subjects.py`: a dotted upstream path split into a module and the subject inside it.
- `ids.py`: check ids that read (`lora-model`), never over 60 characters.
- `pass_through.py`: signatures that take anything, on which `accepts`/`call` cannot fail.
- `split_texts.py`: one source check per text that breaks on its own.
- `judging.py`: proposals judged on the range's ends, bisected where only one end holds.
- `attached.py`: names the client sets on an upstream module no release read binds.
- `last_held.py`: checks broken on every release in range, made warnings: where each last held.
- `matrices.py`: an upstream's proposed matrix, settled: what is kept, gated and left out.
"""
