"""Differentiable ops: each op's forward rule and its gradient rule side by side."""
