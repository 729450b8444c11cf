"""What the training scripts in ``training/`` share: run directories, checked command lines, torch policies,
MaskablePPO runs, imitation and DAgger data. Installed with the project (``pip install -e ".[train]"``) beside
:mod:`friday13_env`, it needs the ``train`` extra (torch, stable-baselines3); the runtime package never imports it.
"""
