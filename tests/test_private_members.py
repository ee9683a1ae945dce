"""The product (`components`, `ingest`, `pipelines`, `app`) uses only the public API of its dependencies: it imports
no module or name beginning with `_` from a third-party package, and reads or writes no `_attribute` of a
third-party module or object, as far as the source shows it. Read statically: an object counts as third-party when
it is an imported third-party module or name, the result of calling or indexing one, a name assigned from such an
expression or annotated with a third-party type, the result of `super().method()` in a class with a third-party
base, or `self` in such a class for an attribute the class itself never defines. Dunder names (`__version__`) are
public; the standard library and the product's own packages are not dependencies."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.test_layers import PACKAGES, ROOT, module_files

OWN = frozenset({*PACKAGES, "tests", "__future__"})
Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def third_party(module: str) -> bool:
    top = module.split(".")[0]
    return bool(top) and top not in OWN and top not in sys.stdlib_module_names


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class Reader:
    """The private uses of third-party members in one module's syntax tree."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.found: set[tuple[int, str]] = set()
        self.imported: set[str] = set()  # names bound to a third-party module or name, anywhere in the module
        self.parents: dict[ast.AST, ast.AST] = {}
        self.assigned: dict[ast.AST, set[str]] = {}
        self.scopes: dict[ast.AST, set[str]] = {}
        self.strings = string_values(tree)
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def read(self) -> list[tuple[int, str]]:
        self.read_imports()
        for scope in [self.tree, *(n for n in ast.walk(self.tree) if isinstance(n, Scope))]:
            self.read_scope(scope)
        return sorted(self.found)

    def read_imports(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if not third_party(alias.name):
                        continue
                    if any(map(private, alias.name.split("."))):
                        self.found.add((node.lineno, f"imports {alias.name}"))
                    self.imported.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and third_party(node.module):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if any(map(private, full.split("."))):
                        self.found.add((node.lineno, f"imports {full}"))
                    self.imported.add(alias.asname or alias.name)

    def enclosing(self, node: ast.AST, kinds: type | tuple[type, ...]) -> ast.AST | None:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, kinds):
                return node
        return None

    def third_party_class(self, node: ast.AST) -> ast.ClassDef | None:
        """The class `node` is written in, when one of its bases is a third-party name."""
        found = self.enclosing(node, ast.ClassDef)
        if isinstance(found, ast.ClassDef) and any(self.is_third_party(base, set()) for base in found.bases):
            return found
        return None

    def is_third_party(self, node: ast.AST | None, names: set[str]) -> bool:
        """Whether the expression's value is (statically) a third-party module or object."""
        if isinstance(node, ast.Name):
            return node.id in names or node.id in self.imported
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr in self.self_attributes(node)
        if self.loaded_module(node) is not None:  # `sys.modules["name"]`, `sys.modules.get("name")`
            return any(map(third_party, self.loaded_module(node) or ()))
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Await | ast.Starred):
            return self.is_third_party(node.value, names)
        if isinstance(node, ast.BinOp):  # `Response | None`
            return self.is_third_party(node.left, names) or self.is_third_party(node.right, names)
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            return self.is_third_party(node.elt, names)
        if isinstance(node, ast.Call):
            func = node.func
            if getattr(func, "attr", getattr(func, "id", None)) == "import_module" and node.args:
                # A dependency's module by name; a name not written out counts too (the product imports its own
                # modules with `import`).
                named = node.args[0]
                return not isinstance(named, ast.Constant) or third_party(str(named.value))
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "super"
            ):
                return self.third_party_class(node) is not None
            return self.is_third_party(func, names)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
            try:
                return self.is_third_party(ast.parse(node.value, mode="eval").body, names)
            except SyntaxError:
                return False
        return False

    def loaded_module(self, node: ast.AST) -> set[str] | None:
        """The names of the modules `sys.modules[name]` (or `.get(name)`) may be, or None for another expression."""
        if isinstance(node, ast.Subscript):
            holder, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            holder, key = node.func.value, node.args[0] if node.args else None
        else:
            return None
        if not (
            isinstance(holder, ast.Attribute)
            and holder.attr == "modules"
            and isinstance(holder.value, ast.Name)
            and holder.value.id == "sys"
            and key is not None
        ):
            return None
        return literal_strings(key, self.strings)

    def self_attributes(self, node: ast.AST) -> set[str]:
        """The attributes of `self` that the class around `node` assigns a third-party object (`self.x = Client()`)."""
        cls = self.enclosing(node, ast.ClassDef)
        if cls is None:
            return set()
        if cls not in self.assigned:
            self.assigned[cls] = set()  # while it is read: `self.x = self.x...` is not third-party by itself
            self.assigned[cls] = {
                target.attr
                for assign in ast.walk(cls)
                if isinstance(assign, ast.Assign | ast.AnnAssign)
                and self.is_third_party(assign.value, self.names_around(assign))
                for target in (assign.targets if isinstance(assign, ast.Assign) else [assign.target])
                if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self"
            }
        return self.assigned[cls]

    def names_around(self, node: ast.AST) -> set[str]:
        """The third-party names of the function `node` is written in."""
        scope = self.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        if scope is None:
            return set()
        if scope not in self.scopes:
            self.scopes[scope] = set()  # while it is read
            self.scopes[scope] = self.scope_names(scope, set())  # type: ignore[arg-type]
        return self.scopes[scope]

    def scope_nodes(self, scope: Scope) -> Iterator[ast.AST]:
        """The nodes of `scope` outside the functions written in it."""
        todo = list(ast.iter_child_nodes(scope))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, Scope):
                todo.extend(ast.iter_child_nodes(node))

    def scope_names(self, scope: Scope, inherited: set[str]) -> set[str]:
        """The names bound in `scope` to a third-party object (assignment, annotation, `with ... as`, `for`)."""
        names = set(inherited)
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            arguments = scope.args
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                if self.is_third_party(arg.annotation, names):
                    names.add(arg.arg)
        nodes = list(self.scope_nodes(scope))
        for _ in range(3):  # a name assigned from another one assigned later in the text
            for node in nodes:
                targets: list[ast.AST] = []
                if isinstance(node, ast.Assign) and self.is_third_party(node.value, names):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign) and (
                    self.is_third_party(node.annotation, names) or self.is_third_party(node.value, names)
                ):
                    targets = [node.target]
                elif isinstance(node, ast.NamedExpr) and self.is_third_party(node.value, names):
                    targets = [node.target]
                elif isinstance(node, ast.withitem) and self.is_third_party(node.context_expr, names):
                    targets = [node.optional_vars] if node.optional_vars else []
                elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and self.is_third_party(
                    node.iter, names
                ):
                    targets = [node.target]
                for target in targets:
                    names.update(bound_names(target))
        return names

    def read_scope(self, scope: Scope) -> None:
        outer = self.enclosing(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        inherited = self.scope_names(outer, set()) if outer is not None else set()  # type: ignore[arg-type]
        names = self.scope_names(scope, inherited)
        for node in self.scope_nodes(scope):
            by_name = named_member(node, self.strings)
            if by_name is not None and private(by_name[1]) and self.is_third_party(by_name[0], names):
                self.found.add((node.lineno, f"uses {ast.unparse(by_name[0])}.{by_name[1]}"))
            if not isinstance(node, ast.Attribute) or not private(node.attr):
                continue
            if self.is_third_party(node.value, names):
                self.found.add((node.lineno, f"uses {ast.unparse(node)}"))
            elif isinstance(node.value, ast.Name) and node.value.id == "self":
                cls = self.third_party_class(node)
                if cls is not None and node.attr not in own_attributes(cls):
                    self.found.add((node.lineno, f"uses {ast.unparse(node)} (inherited from a dependency)"))


def named_member(node: ast.AST, strings: dict[str, set[str]] | None = None) -> tuple[ast.expr, str] | None:
    """`(obj, "name")` for `getattr(obj, "name", ...)` (and `setattr`, `hasattr`, `delattr`), `object.__setattr__(obj,
    "name", ...)`, `obj.__setattr__("name", ...)`, `obj.__dict__["name"]` and `vars(obj)["name"]`. The name may be
    written through the module's strings (`strings`, `string_values`): a private one among its values is the one."""
    target: ast.expr | None = None
    named: ast.expr | None = None
    if isinstance(node, ast.Call) and len(node.args) >= 1:
        func = node.func
        if isinstance(func, ast.Name) and func.id in NAMED_ACCESS and len(node.args) >= 2:
            target, named = node.args[0], node.args[1]
        elif isinstance(func, ast.Attribute) and func.attr in DUNDER_ACCESS:
            if isinstance(func.value, ast.Name) and func.value.id in {"object", "type"} and len(node.args) >= 2:
                target, named = node.args[0], node.args[1]
            else:
                target, named = func.value, node.args[0]
    elif isinstance(node, ast.Subscript):
        holder = node.value
        if isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
            target, named = holder.value, node.slice
        elif (
            isinstance(holder, ast.Call)
            and isinstance(holder.func, ast.Name)
            and holder.func.id == "vars"
            and len(holder.args) == 1
        ):
            target, named = holder.args[0], node.slice
    if target is None or named is None:
        return None
    values = literal_strings(named, strings or {})
    if not values:
        return None
    return target, min(values, key=lambda value: (not private(value), value))


NAMED_ACCESS = frozenset({"getattr", "setattr", "hasattr", "delattr"})
DUNDER_ACCESS = frozenset({"__getattribute__", "__getattr__", "__setattr__", "__delattr__"})


def string_values(tree: ast.AST) -> dict[str, set[str]]:
    """The strings each name of a module is bound to where the text spells them out (`NAME = "_x"`, `for name in
    ("_a", "_b")`), so a member's name passed through one is read as that name."""
    values: dict[str, set[str]] = {}
    for _ in range(2):  # a string made of another name's
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found = literal_strings(node.value, values)
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and isinstance(
                node.iter, ast.Tuple | ast.List | ast.Set
            ):
                targets = [node.target]
                found = {value for element in node.iter.elts for value in literal_strings(element, values)}
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and found:
                    values.setdefault(target.id, set()).update(found)
    return values


def literal_strings(node: ast.AST, strings: dict[str, set[str]]) -> set[str]:
    """The strings an expression may be, as far as the text spells them out (constants, `strings`' names, `+` and
    f-strings of those); empty when it does not."""
    if isinstance(node, ast.Constant):
        return {node.value} if isinstance(node.value, str) else set()
    if isinstance(node, ast.Name):
        return set(strings.get(node.id, ()))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal_strings(node.left, strings), literal_strings(node.right, strings)
        return {first + second for first in left for second in right}
    if isinstance(node, ast.FormattedValue) and node.format_spec is None and node.conversion == -1:
        return literal_strings(node.value, strings)
    if isinstance(node, ast.JoinedStr):
        made = {""}
        for piece in node.values:
            parts = literal_strings(piece, strings)
            if not parts:
                return set()
            made = {first + second for first in made for second in parts}
        return made
    return set()


def bound_names(target: ast.AST) -> Iterator[str]:
    """The names an assignment target binds (`a`, `a, *b`); not `self` in `self.x = ...`."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from bound_names(target.value)


def own_attributes(cls: ast.ClassDef) -> set[str]:
    """The names a class defines itself: methods, class attributes, and `self.x = ...` in its methods."""
    return defined_names(cls) - {cls.name}


def private_uses(root: Path) -> list[str]:
    """`file:line what` for every private use of a third-party member in the product's modules under `root`."""
    return uses_in(root, lambda tree: Reader(tree).read())


def uses_in(root: Path, read: Callable[[ast.Module], list[tuple[int, str]]]) -> list[str]:
    """`file:line what` for what `read` finds in each of the product's modules under `root`."""
    found = []
    for path in module_files(root).values():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend(f"{path.relative_to(root)}:{line} {what}" for line, what in read(tree))
    return found


# Private uses written before this check, each still to be replaced by a public way (issue #29), by file and use
# (without the line, which moves as the file changes). The check fails on any other one, and on an entry here that
# is gone (so the list only shrinks).
NOT_YET_REPLACED: frozenset[str] = frozenset()


def test_the_product_uses_no_private_member_of_a_dependency() -> None:
    assert_only_listed(private_uses(ROOT), NOT_YET_REPLACED)


def assert_only_listed(found: list[str], listed: frozenset[str]) -> None:
    """Every use found is listed (by file and use), and every listed one is still found."""
    assert [use for use in found if without_line(use) not in listed] == []
    assert sorted(listed - {without_line(use) for use in found}) == []  # replaced: take it off the list


def without_line(use: str) -> str:
    """`file:line what` as `file what`."""
    return re.sub(r"^(\S+):\d+ ", r"\1 ", use)


def _write(root: Path, source: str) -> Path:
    for package in PACKAGES:
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()
    (root / "components" / "fetching.py").write_text(source, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "source",
    [
        "import quorvane\nprint(quorvane.__version__, quorvane.Client().send())\n",
        "from components import _shared\nimport json\njson._default_decoder\n",  # own package, standard library
        "class Store:\n    def __init__(self):\n        self._rows = []\n    def add(self, row):\n"
        "        self._rows.append(row)\n",
        "from quorvane import Adapter\nclass A(Adapter):\n    def __init__(self):\n        self._limit = 3\n"
        "    def send(self):\n        return self._limit\n",
        "import quorvane\ndef f(rows):\n    return rows._cache\ndef g():\n    rows = quorvane.rows()\n"
        "    return rows\n",
        "import importlib\nm = importlib.import_module('components.store')\nm._rows\ngetattr(m, '_rows')\n",
        "import quorvane\nclass Store:\n    def __init__(self):\n        self._lock = quorvane.Lock()\n"
        "        self._rows = []\n    def add(self, row):\n        self._rows.append(row)\n",
        # Names through strings that are public, or on the product's own and the standard library's modules.
        "import quorvane.net as net\nSIZE = 'size'\ngetattr(net, SIZE)\nnet.__dict__['size']\n",
        "import sys\nimport quorvane\nNAME = '_rows'\ngetattr(sys.modules['components.store'], NAME)\n"
        "vars(sys)['_x']\nobject.__setattr__(sys, '_x', 1)\n",
    ],
)
def test_own_and_public_members_are_not_found(tmp_path: Path, source: str) -> None:
    assert private_uses(_write(tmp_path, source)) == []


# -- the product's own modules: a private member is used only in the module that defines it ------------------------
#
# Statically: `name._member` (read, written or deleted, also through `getattr` and the like) where `name` is not
# `self`/`cls` and the module defines no `_member` itself (a function, class or name, or `self._member = ...`), and
# `from own.module import _name`. Names bound to a dependency or the standard library are left to the test above.
# A class's own members read on another instance of it (`other._rows` beside `self._rows`) are its own.

# The documented API of `collections.namedtuple`, named with an underscore to stay clear of the fields.
NAMEDTUPLE_API = frozenset({"_asdict", "_field_defaults", "_fields", "_make", "_replace"})


def own_module(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def defined_names(tree: ast.AST) -> set[str]:
    """What a module (or class) defines: its functions and classes, the names it assigns (class attributes and fields
    too), and the attributes its methods assign on `self` or `cls`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in {"self", "cls"}
        ):
            names.add(node.attr)
    return names


def root_name(node: ast.AST) -> str | None:
    """The name an expression starts from (`kb` in `kb.index._q`, `store` in `store.get()._rows`, `index` in
    `cast(Index, index)._pool`: a cast is its value)."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call | ast.Await | ast.Starred):
        if isinstance(node, ast.Call) and is_cast(node):
            node = node.args[1]
            continue
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def is_cast(node: ast.Call) -> bool:
    """`cast(T, value)` or `typing.cast(T, value)`."""
    name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
    return name == "cast" and len(node.args) == 2


def foreign_private_uses_in(tree: ast.Module) -> list[tuple[int, str]]:
    """The uses in one module of the private members of the product's other modules."""
    defined = defined_names(tree)
    outside: set[str] = set()  # names bound to a dependency's or the standard library's module or name
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not own_module(alias.name):
                    outside.add(alias.asname or alias.name.split(".")[0])
                elif any(map(private, alias.name.split("."))):
                    found.add((node.lineno, f"imports {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if node.level == 0 and not own_module(module):
                    outside.add(alias.asname or alias.name)
                elif any(map(private, f"{module}.{alias.name}".lstrip(".").split("."))):
                    found.add((node.lineno, f"imports {module}.{alias.name}"))
    for node in ast.walk(tree):
        use = (node.value, node.attr) if isinstance(node, ast.Attribute) else named_member(node)
        if use is None or not private(use[1]) or use[1] in defined or use[1] in NAMEDTUPLE_API:
            continue
        target, member = use
        if isinstance(target, ast.Name) and target.id in {"self", "cls"}:
            continue
        if root_name(target) in outside:
            continue
        found.add((node.lineno, f"uses {ast.unparse(target)}.{member}"))
    return sorted(found)


def foreign_private_uses(root: Path) -> list[str]:
    """`file:line what` for every use of another product module's private member in the product under `root`."""
    return uses_in(root, foreign_private_uses_in)


def test_the_product_uses_no_private_member_of_another_of_its_modules() -> None:
    assert_only_listed(foreign_private_uses(ROOT), frozenset())


# Uses of a dependency's private members (found by `private_uses`) and of another of the product's modules' (by
# `foreign_private_uses`), each as (the source of components/fetching.py, the use found).
DEPENDENCY_PRIVATE_USES = [
    ("from quorvane._utils import Pattern\n", "1 imports quorvane._utils.Pattern"),
    ("def late():\n    import quorvane._wire as wire\n", "2 imports quorvane._wire"),
    ("from quorvane import _helper\n", "1 imports quorvane._helper"),
    ("import quorvane\nquorvane._cache.clear()\n", "2 uses quorvane._cache"),
    ("import quorvane.net as net\nx = net._pool\n", "2 uses net._pool"),
    ("from quorvane import Client\nclient = Client()\nclient._send()\n", "3 uses client._send"),
    ("import quorvane\ndef f():\n    with quorvane.Client() as c:\n        return c._pool\n", "4 uses c._pool"),
    ("import quorvane\ndef f(r: quorvane.Response | None):\n    return r._body\n", "3 uses r._body"),
    ("import quorvane\ndef f():\n    r = quorvane.get('x')\n    r._body = b''\n", "4 uses r._body"),
    ("import quorvane\nfor r in quorvane.all():\n    r._seen\n", "3 uses r._seen"),
    (
        "import quorvane\nclass A(quorvane.Adapter):\n    def send(self):\n        r = super().send()\n"
        "        r._content = b''\n",
        "5 uses r._content",
    ),
    (
        "import quorvane\nclass A:\n    def __init__(self):\n        self.client = quorvane.Client()\n"
        "    def send(self):\n        return self.client._wire\n",
        "6 uses self.client._wire",
    ),
    ("import quorvane\ndef f(r: quorvane.Response):\n    return getattr(r, '_body', None)\n", "3 uses r._body"),
    ("import importlib\nm = importlib.import_module('quorvane.net')\nm._pool = None\n", "3 uses m._pool"),
    (
        "import importlib\nfor m in [importlib.import_module(n) for n in NAMES]:\n    setattr(m, '_pool', 1)\n",
        "3 uses m._pool",
    ),
    (
        "from quorvane import Secret\nclass A:\n    def __init__(self, key: Secret):\n        self.key = key\n"
        "    def send(self):\n        return self.key._value\n",
        "6 uses self.key._value",
    ),
    (
        "from quorvane import Adapter\nclass A(Adapter):\n    def send(self):\n        return self._pool\n",
        "4 uses self._pool (inherited from a dependency)",
    ),
    # The member's name written through a string the call does not spell out, or by another way of writing it.
    ("import quorvane.net as net\nPOOL = '_pool'\nsetattr(net, POOL, None)\n", "3 uses net._pool"),
    ("import quorvane.net as net\nfor name in ('size', '_pool'):\n    getattr(net, name)\n", "3 uses net._pool"),
    ("import quorvane.net as net\nsetattr(net, '_' + 'pool', None)\n", "2 uses net._pool"),
    ("import quorvane.net as net\nPART = 'pool'\ndelattr(net, f'_{PART}')\n", "3 uses net._pool"),
    ("import quorvane.net as net\nobject.__setattr__(net, '_pool', None)\n", "2 uses net._pool"),
    ("import quorvane.net as net\nnet.__setattr__('_pool', None)\n", "2 uses net._pool"),
    ("import quorvane.net as net\nnet.__dict__['_pool'] = None\n", "2 uses net._pool"),
    ("import quorvane.net as net\nvars(net)['_pool'] = None\n", "2 uses net._pool"),
    (
        "import sys\nsetattr(sys.modules['quorvane.net'], '_pool', None)\n",
        "2 uses sys.modules['quorvane.net']._pool",
    ),
    ("import sys\nsys.modules.get('quorvane.net')._pool = None\n", "2 uses sys.modules.get('quorvane.net')._pool"),
]
OWN_PRIVATE_USES = [
    ("from components.store import _rows\n", "1 imports components.store._rows"),
    ("from .store import _Rows as Rows\n", "1 imports .store._Rows"),
    ("import components._wire\n", "1 imports components._wire"),
    ("from components import store\nstore._LIMIT = 3\n", "2 uses store._LIMIT"),
    ("def f(index):\n    with index._connection() as conn:\n        return conn\n", "2 uses index._connection"),
    ("def f(kb):\n    kb.index._q = None\n", "2 uses kb.index._q"),
    ("def f(index):\n    del index._spy\n", "2 uses index._spy"),
    ("class A:\n    def f(self):\n        return self.index._pool\n", "3 uses self.index._pool"),
    ("def f(index):\n    return getattr(index, '_pool', None)\n", "2 uses index._pool"),
    ("class A:\n    def f(self, upstream):\n        upstream._endless(self)\n", "3 uses upstream._endless"),
    (
        "from typing import cast\ndef f(index):\n    return cast(Index, index)._pool\n",
        "3 uses cast(Index, index)._pool",
    ),
    (
        "import typing\ndef f(index):\n    return typing.cast('Index', index)._pool\n",
        "3 uses typing.cast('Index', index)._pool",
    ),
]


@pytest.mark.parametrize(
    ("check", "source", "found"),
    [
        *((private_uses, *use) for use in DEPENDENCY_PRIVATE_USES),
        *((foreign_private_uses, *use) for use in OWN_PRIVATE_USES),
    ],
)
def test_a_private_use_is_found(tmp_path: Path, check, source: str, found: str) -> None:
    assert check(_write(tmp_path, source)) == [f"components/fetching.py:{found}"]


@pytest.mark.parametrize(
    "source",
    [
        "class Store:\n    def __init__(self):\n        self._rows = []\n    def merge(self, other):\n"
        "        return self._rows + other._rows\n",
        "class A:\n    _registry = {}\n    @classmethod\n    def make(cls):\n"
        "        return cls._registry, cls._other\n",
        "class A(Base):\n    def f(self):\n        return self._inherited\n",
        "import argparse\ndef f(sub: argparse._SubParsersAction):\n    return sub\n",
        "import quorvane\nquorvane._cache.clear()\n",  # a dependency's: the test above
        "from quorvane import Client\nClient()._send()\n",
        "def f(point):\n    return point._replace(x=1), point._asdict(), point.__dict__\n",
        "from components.store import Store, rows\nfrom . import public\n",
    ],
)
def test_own_members_and_public_ones_are_not_found_as_another_modules(tmp_path: Path, source: str) -> None:
    assert foreign_private_uses(_write(tmp_path, source)) == []
