"""Process groups: the default (world) group and new_group's subgroups."""
from __future__ import annotations

import datetime
import os
import warnings

__all__ = ["ProcessGroup", "group", "GroupMember", "init_process_group", "destroy_process_group",
           "is_initialized", "is_available", "is_mpi_available", "is_nccl_available", "new_group",
           "get_rank", "get_world_size", "get_backend", "get_process_group_ranks"]

#: torch's default timeout of the CPU backends (gloo, mpi)
DEFAULT_TIMEOUT = datetime.timedelta(minutes=10)

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class ProcessGroup:
    """A set of ranks that run collectives together (``torch.distributed.ProcessGroup``).

    Made by :func:`init_process_group` (the default group, every rank) and
    :func:`new_group`; not constructed directly.

    Parameters
    ----------
    backend : object
        The process-wide backend (MPI).
    comm : object
        The backend's communicator of these ranks.
    ranks : list of int
        The members' global ranks, in group-rank order.
    timeout : float
        Seconds a collective of this group may take before it fails.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> pg = dist.group.WORLD
    >>> pg.rank(), pg.size(), pg.ranks
    (0, 1, [0])
    >>> dist.destroy_process_group()
    """

    def __init__(self, backend, comm, ranks, timeout):
        self._backend = backend
        self._comm = comm
        self.ranks = list(ranks)
        self.timeout = timeout
        self._rank = self.ranks.index(backend.world_rank)

    def rank(self):
        """This process's rank in the group.

        Returns
        -------
        int
            Between 0 and ``size() - 1``.

        Examples
        --------
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> dist.group.WORLD.rank()
        0
        >>> dist.destroy_process_group()
        """
        return self._rank

    def size(self):
        """The number of ranks in the group.

        Returns
        -------
        int
            At least 1.

        Examples
        --------
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> dist.group.WORLD.size()
        1
        >>> dist.destroy_process_group()
        """
        return len(self.ranks)

    def name(self):
        """The backend's name, as ``torch.distributed.ProcessGroup.name()``.

        Returns
        -------
        str
            ``"mpi"``.

        Examples
        --------
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("mpi", world_size=1, rank=0)
        >>> dist.group.WORLD.name()
        'mpi'
        >>> dist.destroy_process_group()
        """
        return self._backend.name

    def _group_rank(self, global_rank, what="rank"):
        """The group rank of a global rank; ValueError when it is not a member."""
        if global_rank not in self.ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {self.ranks} "
                             f"(the {what} must be a member of the group)")
        return self.ranks.index(global_rank)

    def __repr__(self):
        return f"<ProcessGroup {self._backend.name} ranks={self.ranks} timeout={self.timeout:g}s>"


class GroupMember:
    """torch's markers for groups: ``WORLD`` and ``NON_GROUP_MEMBER``.

    ``GroupMember.WORLD`` is the default group once it exists (None before);
    ``NON_GROUP_MEMBER`` is what :func:`new_group` returns on the ranks that
    are not in the new group.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.GroupMember.WORLD is None
    True
    """

    WORLD = None
    NON_GROUP_MEMBER = object()


#: ``rg.distributed.group.WORLD``, as ``torch.distributed.group.WORLD``.
group = GroupMember

_state: dict = {"backend": None, "groups": []}


def _timeout_seconds(timeout):
    if timeout is None:
        return DEFAULT_TIMEOUT.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    if not seconds > 0:
        raise ValueError(f"timeout must be positive, got {seconds:g} s")
    return seconds


def _env_int(name):
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} is expected to be an int, got {value!r}") from None


def is_available():
    """Whether retrograd.distributed can run (always True: MPI is checked at init).

    Returns
    -------
    bool
        True.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.distributed.is_available()
    True
    """
    return True


def is_mpi_available():
    """Whether the MPI backend can be used (mpi4py is importable).

    Returns
    -------
    bool
        True when ``import mpi4py`` works.

    Examples
    --------
    >>> import retrograd as rg
    >>> isinstance(rg.distributed.is_mpi_available(), bool)
    True
    """
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available():
    """Whether the NCCL backend can be used: not yet in this release.

    Returns
    -------
    bool
        False: ``backend="nccl"`` is not implemented yet.

    Examples
    --------
    >>> import retrograd as rg
    >>> rg.distributed.is_nccl_available()
    False
    """
    return False


def is_initialized():
    """Whether the default process group exists.

    Returns
    -------
    bool
        True between :func:`init_process_group` and :func:`destroy_process_group`.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return GroupMember.WORLD is not None


def _default_group():
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    return GroupMember.WORLD


def resolve(group_arg):
    """The ProcessGroup a collective runs on, or None on a non-member rank."""
    if group_arg is None or group_arg is GroupMember.WORLD:
        return _default_group()
    _default_group()
    if group_arg is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group_arg, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup (from new_group) or None, got {type(group_arg).__name__}")
    if group_arg._comm is None:
        raise ValueError(f"{group_arg!r} has been destroyed (destroy_process_group); make a new group")
    return group_arg


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Initialize the default process group (every rank of the job).

    ``torch.distributed.init_process_group``. With the ``"mpi"`` backend,
    the MPI launcher (``mpiexec``, ``srun``, or
    ``python -m retrograd.distributed.run``) decides the ranks: ``rank``
    and ``world_size``, and the ``RANK`` and ``WORLD_SIZE`` environment
    variables when set, are checked against it. ``MASTER_ADDR`` and
    ``MASTER_PORT`` are not needed: MPI makes the rendezvous. Call it on
    every rank.

    Parameters
    ----------
    backend : str, optional
        ``"mpi"`` (the default). ``"nccl"`` is not available yet.
    init_method : str, optional
        None or ``"env://"``; MPI needs no other rendezvous.
    timeout : datetime.timedelta or float, optional
        How long any collective may take before every waiting rank raises
        :class:`DistBackendError` (default 10 minutes, torch's).
    world_size, rank : int, optional
        When given (not -1), they must match the launcher's.
    store, group_name, pg_options, device_id : optional
        Accepted for torch's signature; ``store`` and ``pg_options`` must be
        None (MPI has no store).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Initialized twice; an unknown backend or init method; a rank or
        world size that contradicts the launcher's.
    RuntimeError
        ``backend="nccl"`` (not available yet).
    ImportError
        mpi4py is not installed.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> dist.get_rank(), dist.get_world_size()
    (0, 1)
    >>> dist.destroy_process_group()
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "mpi" if backend is None else str(backend).lower()
    if name == "nccl":
        raise RuntimeError(
            "the 'nccl' backend is not available yet in retrograd.distributed (it is planned over "
            "CuPy's NCCL bindings); use backend='mpi' with CPU tensors")
    if name != "mpi":
        raise ValueError(f"Invalid backend: {backend!r}; retrograd.distributed provides 'mpi' "
                         f"(and, later, 'nccl')")
    if init_method not in (None, "env://"):
        raise ValueError(f"init_method {init_method!r} is not supported by the 'mpi' backend: MPI's "
                         f"launcher makes the rendezvous; pass init_method=None or 'env://'")
    if store is not None or pg_options is not None:
        raise ValueError("the 'mpi' backend takes no store and no pg_options")
    seconds = _timeout_seconds(timeout)
    from retrograd.distributed._mpi_backend import MPIBackend
    backend_obj = _state["backend"]
    if backend_obj is None or backend_obj.closed:
        backend_obj = MPIBackend()
    mpi_rank, mpi_size = backend_obj.world_rank, backend_obj.world_size
    for what, given in (("world_size", world_size), ("WORLD_SIZE", _env_int("WORLD_SIZE")),
                        ("rank", rank), ("RANK", _env_int("RANK"))):
        expected = mpi_size if what.lower() == "world_size" else mpi_rank
        if given is not None and given != -1 and given != expected:
            source = "argument" if what.islower() else "environment variable"
            backend_obj.close()
            raise ValueError(
                f"the {what} {source} is {given}, but the MPI launcher started this process as rank "
                f"{mpi_rank} of {mpi_size}: start {given if what.lower() == 'world_size' else 'the'} "
                f"processes with mpiexec -n N (or python -m retrograd.distributed.run --nproc N), "
                f"or leave {what} unset")
    _state["backend"] = backend_obj
    GroupMember.WORLD = ProcessGroup(backend_obj, backend_obj.world, range(mpi_size), seconds)
    _state["groups"] = [GroupMember.WORLD]


def destroy_process_group(group=None):
    """Destroy a process group, or the default one and every group with it.

    ``torch.distributed.destroy_process_group``. Call it on every rank
    after the last collective, before the process exits.

    Parameters
    ----------
    group : ProcessGroup, optional
        The group to destroy; None destroys them all.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        No default process group exists.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    backend = _state["backend"]
    if group is None or group is GroupMember.WORLD:
        for g in _state["groups"][1:]:
            if g is not GroupMember.NON_GROUP_MEMBER:
                backend.free_comm(g._comm)
                g._comm = None
        GroupMember.WORLD._comm = None
        GroupMember.WORLD = None
        _state["groups"] = []
        # MPI itself cannot be initialized twice in a process: the backend
        # (and MPI) stays, closed, only if a failure left it unusable.
        backend.close()
        _state["backend"] = None
    elif group is GroupMember.NON_GROUP_MEMBER:
        return
    else:
        backend.free_comm(group._comm)
        group._comm = None
        if group in _state["groups"]:
            _state["groups"].remove(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """Make a process group of some of the ranks (``torch.distributed.new_group``).

    Every rank of the default group must call it, with the same ``ranks``,
    even the ranks left out. Unlike the collectives, making the group is a
    blocking MPI call without a timeout.

    Parameters
    ----------
    ranks : list of int, optional
        Global ranks of the members (sorted; default every rank).
    timeout : datetime.timedelta or float, optional
        The new group's collective timeout (default: the default group's).
    backend : str, optional
        None or ``"mpi"``.
    pg_options, use_local_synchronization, group_desc, device_id : optional
        Accepted for torch's signature and ignored.

    Returns
    -------
    ProcessGroup or object
        The group on its members; ``GroupMember.NON_GROUP_MEMBER`` on the others.

    Raises
    ------
    ValueError
        No default group; a rank out of range or repeated.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> g = dist.new_group([0])
    >>> dist.get_world_size(g)
    1
    >>> dist.destroy_process_group()
    """
    world = _default_group()
    if backend not in (None, "mpi"):
        raise ValueError(f"new_group: backend {backend!r} is not available; use 'mpi' (or None)")
    members = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks {list(ranks)} holds a rank twice")
    if len(members) > world.size():
        raise ValueError("the new group's world size should be less or equal to the world size set by "
                         "init_process_group")
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is out of range: the world has ranks 0 to {world.size() - 1}")
    seconds = world.timeout if timeout is None else _timeout_seconds(timeout)
    backend_obj = world._backend
    comm = backend_obj.make_comm(members)
    if comm is None:
        return GroupMember.NON_GROUP_MEMBER
    g = ProcessGroup(backend_obj, comm, members, seconds)
    _state["groups"].append(g)
    return g


def get_rank(group=None):
    """This process's rank in ``group`` (default: the world).

    Parameters
    ----------
    group : ProcessGroup, optional
        The group; default the default group.

    Returns
    -------
    int
        The group rank, or -1 on a rank that is not a member.

    Raises
    ------
    ValueError
        No default process group exists.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> dist.get_rank()
    0
    >>> dist.destroy_process_group()
    """
    g = resolve(group)
    return -1 if g is None else g.rank()


def get_world_size(group=None):
    """The number of ranks in ``group`` (default: the world).

    Parameters
    ----------
    group : ProcessGroup, optional
        The group; default the default group.

    Returns
    -------
    int
        Its size, or -1 on a rank that is not a member.

    Raises
    ------
    ValueError
        No default process group exists.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    g = resolve(group)
    return -1 if g is None else g.size()


def get_backend(group=None):
    """The backend's name of ``group`` (default: the world).

    Parameters
    ----------
    group : ProcessGroup, optional
        The group; default the default group.

    Returns
    -------
    str
        ``"mpi"``.

    Raises
    ------
    ValueError
        No default process group exists, or this rank is not in ``group``.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> dist.get_backend()
    'mpi'
    >>> dist.destroy_process_group()
    """
    g = resolve(group)
    if g is None:
        raise ValueError("Invalid process group specified: this rank is not a member of it")
    return g.name()


def get_process_group_ranks(group):
    """The global ranks of a group's members.

    Parameters
    ----------
    group : ProcessGroup
        The group (None: the default group).

    Returns
    -------
    list of int
        In group-rank order.

    Raises
    ------
    ValueError
        No default process group exists.

    Examples
    --------
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi", world_size=1, rank=0)
    >>> dist.get_process_group_ranks(dist.group.WORLD)
    [0]
    >>> dist.destroy_process_group()
    """
    g = resolve(group)
    if g is None:
        raise ValueError("Invalid process group specified: this rank is not a member of it")
    return list(g.ranks)


def warn_not_in_group(op_name):
    warnings.warn(f"Running {op_name} on global rank {_state['backend'].world_rank} which does not "
                  f"belong to the given group.", stacklevel=3)
