"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict and the deprecated
Container (torch.nn's)."""
from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections import abc as container_abcs
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any, TypeVar

from retrograd.core import Tensor
from retrograd.nn.modules.module import Module, _addindent
from retrograd.nn.parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Container"]

_V = TypeVar("_V")

_CONTAINER_DEPRECATED = ("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                         "Subclass that instead.")


class Container(Module):
    """torch's deprecated base class of containers: a Module whose keyword arguments become submodules.

    Constructing one, or defining a subclass, warns (FutureWarning), as
    torch's does; everything it offers is :class:`Module`'s, so subclass
    that instead.

    Parameters
    ----------
    **kwargs : Module
        Submodules to register, by name.

    Examples
    --------
    >>> import warnings
    >>> import retrograd as rg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     c = rg.nn.Container(fc=rg.nn.Linear(2, 3), act=rg.nn.ReLU())
    >>> [name for name, _ in c.named_children()]
    ['fc', 'act']
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs: Any) -> None:
        if type(self) is Container:     # as torch's: instances of subclasses do not warn again
            warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """A chain of modules: the output of each is the input of the next.

    Built from modules (named ``"0"``, ``"1"``, ...) or from one
    ``OrderedDict`` of named modules. Calling it calls each module in turn
    and returns the last one's output. Indexing by int gives a module, by
    slice a new Sequential of the same modules.

    Parameters
    ----------
    *args : Module or OrderedDict
        The modules, in order; or a single OrderedDict of them by name.

    Examples
    --------
    >>> import retrograd as rg
    >>> class AddOne(rg.nn.Module):
    ...     def forward(self, x):
    ...         return x + 1
    >>> class Double(rg.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> seq = rg.nn.Sequential(AddOne(), Double())
    >>> seq(rg.tensor(1.0))
    tensor(4.)
    >>> seq
    Sequential(
      (0): AddOne()
      (1): Double()
    )
    >>> len(seq), type(seq[1]).__name__, len(seq[:1])
    (2, 'Double', 1)
    """

    _modules: dict[str, Module]  # type: ignore[assignment]

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator: Iterable[_V], idx: int) -> _V:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return next(islice(iterator, idx % size, None))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        # renumber: the names stay "0".."n-1"
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: int) -> "Sequential":
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        for i, module in enumerate(m for _ in range(other) for m in self):
            combined.add_module(str(i), module)
        return combined

    __rmul__ = __mul__

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def pop(self, key: int | slice) -> Any:
        """Remove the module at ``key`` and return it.

        Parameters
        ----------
        key : int or slice
            The index.

        Returns
        -------
        Module or Sequential
            What ``self[key]`` was.

        Raises
        ------
        IndexError
            If the index is out of range.

        Examples
        --------
        >>> import retrograd as rg
        >>> seq = rg.nn.Sequential(rg.nn.Module(), rg.nn.Sequential())
        >>> type(seq.pop(0)).__name__, len(seq)
        ('Module', 1)
        """
        v = self[key]
        del self[key]
        return v

    def forward(self, input: Any) -> Any:
        """Call each module on the previous one's output.

        Parameters
        ----------
        input : Any
            The first module's input.

        Returns
        -------
        Any
            The last module's output (``input`` itself when empty).

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.Sequential()(rg.tensor(3.0))
        tensor(3.)
        """
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module) -> "Sequential":
        """Add ``module`` at the end.

        Parameters
        ----------
        module : Module
            The module.

        Returns
        -------
        Sequential
            self.

        Raises
        ------
        TypeError
            If ``module`` is not a Module.

        Examples
        --------
        >>> import retrograd as rg
        >>> len(rg.nn.Sequential().append(rg.nn.Module()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Insert ``module`` before position ``index`` (negative counts from the end).

        Parameters
        ----------
        index : int
            Where, ``-len(self) <= index <= len(self)``.
        module : Module
            The module.

        Returns
        -------
        Sequential
            self.

        Raises
        ------
        AssertionError
            If ``module`` is not a Module (torch's class for this error).
        IndexError
            If ``index`` is out of range.

        Examples
        --------
        >>> import retrograd as rg
        >>> class A(rg.nn.Module): pass
        >>> class B(rg.nn.Module): pass
        >>> rg.nn.Sequential(A()).insert(0, B())
        Sequential(
          (0): B()
          (1): A()
        )
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        """Append every module of ``sequential`` (any iterable of modules).

        Parameters
        ----------
        sequential : iterable of Module
            The modules.

        Returns
        -------
        Sequential
            self.

        Examples
        --------
        >>> import retrograd as rg
        >>> len(rg.nn.Sequential(rg.nn.Module()).extend([rg.nn.Module(), rg.nn.Module()]))
        3
        """
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """A list of modules, each registered as a child.

    Index, iterate, append and extend it as a Python list; unlike a plain
    list attribute, its modules' parameters are the owner's parameters.
    Its repr collapses runs of equal entries (``(0-2): 3 x Layer()``), as
    torch's does.

    Parameters
    ----------
    modules : iterable of Module, optional
        The initial modules.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Scale(rg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = rg.nn.Parameter(rg.ones(1))
    >>> layers = rg.nn.ModuleList([Scale() for _ in range(3)])
    >>> len(list(layers.parameters()))
    3
    >>> layers
    ModuleList(
      (0-2): 3 x Scale()
    )
    """

    _modules: dict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx: int) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        # runs of equal reprs: [start, end, text]
        runs: list[list[Any]] = []
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for start, end, r in runs:
            head = f"({start}): " if start == end else f"({start}-{end}): {end - start + 1} x "
            lines.append(_addindent(head + r, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``.

        Parameters
        ----------
        index : int
            Where.
        module : Module
            The module.

        Examples
        --------
        >>> import retrograd as rg
        >>> class A(rg.nn.Module): pass
        >>> ml = rg.nn.ModuleList([rg.nn.Module()])
        >>> ml.insert(0, A())
        >>> type(ml[0]).__name__
        'A'
        """
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> "ModuleList":
        """Add ``module`` at the end.

        Parameters
        ----------
        module : Module
            The module.

        Returns
        -------
        ModuleList
            self.

        Raises
        ------
        TypeError
            If ``module`` is not a Module.

        Examples
        --------
        >>> import retrograd as rg
        >>> len(rg.nn.ModuleList().append(rg.nn.Module()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Any:
        """Remove the module at ``key`` and return it.

        Parameters
        ----------
        key : int or slice
            The index.

        Returns
        -------
        Module or ModuleList
            What ``self[key]`` was.

        Raises
        ------
        IndexError
            If the index is out of range.

        Examples
        --------
        >>> import retrograd as rg
        >>> ml = rg.nn.ModuleList([rg.nn.Module(), rg.nn.Module()])
        >>> _ = ml.pop(0)
        >>> len(ml)
        1
        """
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Append every module of the iterable ``modules``.

        Parameters
        ----------
        modules : iterable of Module
            The modules.

        Returns
        -------
        ModuleList
            self.

        Raises
        ------
        TypeError
            If ``modules`` is not iterable, or holds something that is not a Module.

        Examples
        --------
        >>> import retrograd as rg
        >>> len(rg.nn.ModuleList().extend([rg.nn.Module(), rg.nn.Module()]))
        2
        """
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """A dict of modules, each registered as a child under its key.

    Keeps insertion order (and, in :meth:`update`, the order of an ordered
    mapping or of a sequence of pairs).

    Parameters
    ----------
    modules : Mapping or iterable of (str, Module) pairs, optional
        The initial modules.

    Examples
    --------
    >>> import retrograd as rg
    >>> class Double(rg.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> d = rg.nn.ModuleDict({"twice": Double(), "same": rg.nn.Sequential()})
    >>> d["twice"](rg.tensor(3.0))
    tensor(6.)
    >>> list(d.keys()), "same" in d
    (['twice', 'same'], True)
    """

    _modules: dict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module.

        Examples
        --------
        >>> import retrograd as rg
        >>> d = rg.nn.ModuleDict({"a": rg.nn.Module()})
        >>> d.clear(); len(d)
        0
        """
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it.

        Parameters
        ----------
        key : str
            The key.

        Returns
        -------
        Module
            The module.

        Raises
        ------
        KeyError
            If there is no such key.

        Examples
        --------
        >>> import retrograd as rg
        >>> d = rg.nn.ModuleDict({"a": rg.nn.Module()})
        >>> type(d.pop("a")).__name__, len(d)
        ('Module', 0)
        """
        v = self[key]
        del self[key]
        return v

    def keys(self) -> container_abcs.KeysView[str]:
        """The keys, in order.

        Returns
        -------
        KeysView
            The keys.

        Examples
        --------
        >>> import retrograd as rg
        >>> list(rg.nn.ModuleDict([("b", rg.nn.Module()), ("a", rg.nn.Module())]).keys())
        ['b', 'a']
        """
        return self._modules.keys()

    def items(self) -> container_abcs.ItemsView[str, Module]:
        """The ``(key, module)`` pairs, in order.

        Returns
        -------
        ItemsView
            The pairs.

        Examples
        --------
        >>> import retrograd as rg
        >>> [k for k, m in rg.nn.ModuleDict({"a": rg.nn.Module()}).items()]
        ['a']
        """
        return self._modules.items()

    def values(self) -> container_abcs.ValuesView[Module]:
        """The modules, in order.

        Returns
        -------
        ValuesView
            The modules.

        Examples
        --------
        >>> import retrograd as rg
        >>> len(rg.nn.ModuleDict({"a": rg.nn.Module()}).values())
        1
        """
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) modules from a mapping or from an iterable of ``(key, module)`` pairs.

        Parameters
        ----------
        modules : Mapping or iterable of pairs
            The modules.

        Raises
        ------
        TypeError
            If ``modules`` is not iterable, or an element of a sequence is not.
        ValueError
            If an element of a sequence is not a pair.

        Examples
        --------
        >>> import retrograd as rg
        >>> d = rg.nn.ModuleDict()
        >>> d.update([("a", rg.nn.Module())])
        >>> d.update({"b": rg.nn.Module()})
        >>> list(d)
        ['a', 'b']
        """
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, container_abcs.Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is"
                                + type(m).__name__)
            if len(m) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required")
            self[m[0]] = m[1]


def _entry_repr(key: Any, value: Any) -> str:
    # one line of a ParameterList's or ParameterDict's repr
    if isinstance(value, Tensor):
        size = "x".join(str(n) for n in value.shape)
        device = "" if str(value.device) == "cpu" else f" ({value.device})"
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{value.dtype} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list whose tensors are registered parameters (named ``"0"``, ``"1"``, ...).

    Index, iterate, append and extend it as a Python list. A tensor put in
    it (by the constructor, ``append``, ``extend`` or ``pl[i] = t``) becomes a
    :class:`~retrograd.nn.Parameter` (a Parameter is kept as it is), so the
    owner's ``parameters()`` and state dict see it; other objects are kept
    as they are, as torch's.

    Parameters
    ----------
    values : iterable, optional
        The initial entries.

    Examples
    --------
    >>> import retrograd as rg
    >>> pl = rg.nn.ParameterList([rg.ones(2), rg.zeros(1, 3)])
    >>> pl.append(rg.ones(4))
    ParameterList(
        (0): Parameter containing: [float32 of size 2]
        (1): Parameter containing: [float32 of size 1x3]
        (2): Parameter containing: [float32 of size 4]
    )
    >>> list(pl.state_dict()), isinstance(pl[0], rg.nn.Parameter)
    (['0', '1', '2'], True)
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx: Any) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx + len(self) if idx < 0 else idx)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        # every way in (append, extend, the constructor) ends here: the one
        # place where a plain tensor becomes a Parameter
        name = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, name, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")

    def append(self, value: Any) -> "ParameterList":
        """Add ``value`` at the end (a tensor becomes a Parameter).

        Parameters
        ----------
        value : object
            A tensor, or any object.

        Returns
        -------
        ParameterList
            ``self``.

        Examples
        --------
        >>> import retrograd as rg
        >>> pl = rg.nn.ParameterList()
        >>> len(pl.append(rg.ones(2)))
        1
        """
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Append each entry of ``values``.

        Parameters
        ----------
        values : iterable
            Not a tensor (whose rows would be appended one by one).

        Returns
        -------
        ParameterList
            ``self``.

        Raises
        ------
        TypeError
            If ``values`` is a tensor or not iterable.

        Examples
        --------
        >>> import retrograd as rg
        >>> pl = rg.nn.ParameterList([rg.ones(1)])
        >>> len(pl.extend([rg.ones(2), rg.ones(3)]))
        3
        """
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(i, p) for i, p in enumerate(self))


class ParameterDict(Module):
    """An ordered dict whose tensors are registered parameters, under their keys.

    Use it as a Python dict with string keys. A tensor put in it (by the
    constructor, ``update``, ``setdefault`` or ``pd[key] = t``) becomes a
    :class:`~retrograd.nn.Parameter`; other objects are kept as they are.
    ``update`` (and the constructor) keeps the order of an ``OrderedDict``, a
    ParameterDict or a sequence of pairs, and sorts a plain dict's keys, as
    torch's.

    Parameters
    ----------
    parameters : mapping or iterable of (str, object) pairs, optional
        The initial entries.

    Examples
    --------
    >>> import retrograd as rg
    >>> pd = rg.nn.ParameterDict({"weight": rg.ones(2, 2), "bias": rg.zeros(2)})
    >>> pd
    ParameterDict(
        (bias): Parameter containing: [float32 of size 2]
        (weight): Parameter containing: [float32 of size 2x2]
    )
    >>> [name for name, _ in pd.named_parameters()]
    ['bias', 'weight']
    >>> "bias" in pd, pd.get("scale", 1.0)
    (True, 1.0)
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}'). Use string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        # every way in ends here: the one place a plain tensor becomes a
        # Parameter. (The key is checked before it is recorded; torch records
        # a non-string key first, which then breaks the dict's repr.)
        attr = self._key_to_attr(key)
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same entries (not copies of the tensors).

        Returns
        -------
        ParameterDict

        Examples
        --------
        >>> import retrograd as rg
        >>> pd = rg.nn.ParameterDict({"w": rg.ones(1)})
        >>> pd.copy()["w"] is pd["w"]
        True
        """
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``self[key]``, first set to ``default`` when the key is absent.

        Parameters
        ----------
        key : str
        default : object, optional
            A tensor becomes a Parameter.

        Returns
        -------
        object
            The entry under ``key``.

        Examples
        --------
        >>> import retrograd as rg
        >>> pd = rg.nn.ParameterDict()
        >>> type(pd.setdefault("w", rg.ones(1))).__name__
        'Parameter'
        """
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry.

        Examples
        --------
        >>> import retrograd as rg
        >>> pd = rg.nn.ParameterDict({"w": rg.ones(1)})
        >>> pd.clear()
        >>> len(pd), list(pd.parameters())
        (0, [])
        """
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove the entry under ``key`` and return it.

        Parameters
        ----------
        key : str

        Returns
        -------
        object

        Raises
        ------
        AttributeError
            If ``key`` is absent (as torch's).

        Examples
        --------
        >>> import retrograd as rg
        >>> pd = rg.nn.ParameterDict({"w": rg.ones(1)})
        >>> pd.pop("w").shape, len(pd)
        ((1,), 0)
        """
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove the last inserted entry and return it as ``(key, value)``.

        Returns
        -------
        tuple

        Raises
        ------
        KeyError
            If the dict is empty.

        Examples
        --------
        >>> import retrograd as rg
        >>> pd = rg.nn.ParameterDict([("a", rg.ones(1)), ("b", rg.zeros(1))])
        >>> pd.popitem()[0], list(pd)
        ('b', ['a'])
        """
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        k = next(reversed(self._keys))
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` if present, else ``default``.

        Parameters
        ----------
        key : str
        default : object, optional

        Returns
        -------
        object

        Examples
        --------
        >>> import retrograd as rg
        >>> rg.nn.ParameterDict().get("w") is None
        True
        """
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> "ParameterDict":
        """A new ParameterDict with each key of ``keys`` set to ``default``.

        Parameters
        ----------
        keys : iterable of str
        default : object, optional
            A tensor becomes a Parameter for each key (sharing its data).

        Returns
        -------
        ParameterDict

        Examples
        --------
        >>> import retrograd as rg
        >>> list(rg.nn.ParameterDict().fromkeys(["a", "b"], rg.ones(1)))
        ['a', 'b']
        """
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> container_abcs.KeysView[str]:
        """The keys, in order.

        Returns
        -------
        KeysView

        Examples
        --------
        >>> import retrograd as rg
        >>> list(rg.nn.ParameterDict([("b", rg.ones(1)), ("a", rg.ones(1))]).keys())
        ['b', 'a']
        """
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """The ``(key, value)`` pairs, in order.

        Returns
        -------
        iterable of tuple

        Examples
        --------
        >>> import retrograd as rg
        >>> [k for k, v in rg.nn.ParameterDict({"w": rg.ones(1)}).items()]
        ['w']
        """
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The values, in key order.

        Returns
        -------
        iterable

        Examples
        --------
        >>> import retrograd as rg
        >>> [v.shape for v in rg.nn.ParameterDict({"w": rg.ones(2)}).values()]
        [(2,)]
        """
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add or overwrite entries from a mapping or an iterable of ``(key, value)`` pairs.

        An ``OrderedDict``, a ParameterDict or a sequence of pairs keeps its
        order; a plain mapping's entries are added in sorted key order, as
        torch's.

        Parameters
        ----------
        parameters : mapping or iterable of pairs

        Raises
        ------
        TypeError
            If ``parameters`` (or one of its elements) is not iterable.
        ValueError
            For an element that is not a pair.

        Examples
        --------
        >>> import retrograd as rg
        >>> pd = rg.nn.ParameterDict()
        >>> pd.update({"b": rg.ones(1), "a": rg.ones(1)})
        >>> list(pd)
        ['a', 'b']
        """
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, container_abcs.Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is "
                                    f"{type(p).__name__}")
                p = list(p)
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(p)}; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        return "\n".join(_entry_repr(k, p) for k, p in self.items())
