"""`Calculator`: safe arithmetic on an expression, by walking its syntax tree (no eval, no names but math's)."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from haystack import component

from components.resilience import SourceError
from components.serialization import InitParameterSerialization
from components.validation import positive_int

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MATH = ("sqrt", "log", "log10", "log2", "exp", "sin", "cos", "tan", "asin", "acos", "atan", "floor", "ceil")
_FUNCTIONS: dict[str, Callable[..., Any]] = {"abs": abs, "round": round, "min": min, "max": max}
_FUNCTIONS |= {name: getattr(math, name) for name in _MATH}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
MAX_EXPRESSION_CHARS = 500
# Bounds keep a tiny expression (9**9**9) from eating the CPU or memory.
_MAX_EXPONENT = 10_000
_MAX_MAGNITUDE = 1e300
_MAX_NODES = 200


class _Evaluator:
    def __init__(self) -> None:
        self.nodes = 0

    def eval(self, node: ast.AST) -> Any:
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise SourceError(f"The expression is too complex (more than {_MAX_NODES} parts).")
        if isinstance(node, ast.Expression):
            return self.eval(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.eval(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.eval(node.left), self.eval(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
                raise SourceError(f"Exponents above {_MAX_EXPONENT} are not computed.")
            return self._bounded(_BINARY[type(node.op)](left, right))
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
                raise SourceError(f"Only these functions are allowed: {', '.join(sorted(_FUNCTIONS))}.")
            return self._bounded(_FUNCTIONS[node.func.id](*[self.eval(arg) for arg in node.args]))
        if isinstance(node, ast.Name):
            raise SourceError(f"Unknown name {node.id!r}; only {', '.join(sorted(_CONSTANTS))} are defined.")
        raise SourceError(f"Only arithmetic is allowed, not {type(node).__name__}.")

    @staticmethod
    def _bounded(value: Any) -> Any:
        if isinstance(value, complex):
            raise SourceError("The result is not a real number.")
        if abs(value) > _MAX_MAGNITUDE:
            raise SourceError("The result is too large.")
        return value


@component
class Calculator(InitParameterSerialization):
    """Evaluates arithmetic (+ - * / // % **, parentheses, sqrt, log, exp, trigonometry, pi, e) safely.

    Bad expressions raise `SourceError` with one sentence; the tool executor turns it into a status.

    Usage:
    ```python
    Calculator().run(expression="(3 + 4) * sqrt(16)")  # {"result": 28.0, "expression": "(3 + 4) * sqrt(16)"}
    ```
    """

    def __init__(self, max_chars: int = MAX_EXPRESSION_CHARS) -> None:
        self.max_chars = positive_int("max_chars", max_chars)

    @component.output_types(result=float, expression=str)
    def run(self, expression: str) -> dict[str, Any]:
        """Evaluate `expression`.

        :param expression: an arithmetic expression, e.g. "2 * (3 + 4) / 7".
        :returns: `result`: the value as a float; `expression`: the expression evaluated.
        """
        text = (expression or "").strip()
        if not text:
            raise SourceError("The expression is empty.")
        if len(text) > self.max_chars:
            raise SourceError(f"The expression is longer than {self.max_chars} characters.")
        try:
            tree = ast.parse(text.replace("^", "**"), mode="eval")
        except SyntaxError:
            raise SourceError(f"{text!r} is not a valid arithmetic expression.") from None
        try:
            value = _Evaluator().eval(tree)
        except ZeroDivisionError:
            raise SourceError("Division by zero.") from None
        except (ValueError, TypeError, OverflowError) as exc:
            raise SourceError(f"Cannot compute {text!r}: {exc}.") from None
        return {"result": float(value), "expression": text}
