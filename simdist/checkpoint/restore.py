"""Restoring: match a saved object graph to live objects, assign values, defer the rest.

Matching walks the saved graph from its root together with the live objects, by child name
(the trackable protocol, ``simdist.core.trackable``). A saved object matched to a live one
gets its saved tensors at once (``_restore_from_tensors``). What does not exist yet is
restored when it appears, as TF does:

* a child that an object does not have yet (a Keras layer not built, whose weights come
  with its first call; an attribute assigned after the restore; a variable appended to a
  tracked list of a ``Checkpoint``): the restoration listens to that object
  (``trackable.add_listener``) and matches the new children when the object reports them
  (``trackable.children_changed``), until every saved child is matched;
* an optimizer slot (created by the first ``apply_gradients``): when the optimizer creates
  the slot of a variable that was restored, the slot takes its saved value.

Plain Python lists and dicts cannot report changes (only ``Checkpoint``'s tracked
containers do); ``assert_consumed()`` names what stayed unrestored. When several restores
are pending on one object, the latest wins.

Tensors are checked first (``_validate_restore``: shape and dtype), for all the objects
restored at once, so a mismatch (``ValueError``) leaves every one of them untouched.
"""

from __future__ import annotations

import numpy as np

from simdist.checkpoint.graph import escape, walk
from simdist.core import trackable
from simdist.core.trackable import children_of, slots_of

__all__ = ["Restoration", "CheckpointLoadStatus", "InitializationOnlyStatus"]


def _label(obj) -> str:
    name = getattr(obj, "name", None)
    return name if isinstance(name, str) and trackable.tensors_of(obj) else type(obj).__name__


class Restoration:
    """One ``restore`` of a checkpoint into the graph under ``root``.

    Args:
        root: the live root object (the ``Checkpoint``).
        prefix: the checkpoint's path (for messages).
        index: the checkpoint's parsed index (nodes with ``tensors``: name -> key).
        values: key -> array.
    """

    def __init__(self, root, prefix: str, index: dict, values: dict[str, np.ndarray]) -> None:
        self.root = root
        self.prefix = prefix
        self.nodes: list[dict] = index["object_graph"]
        self.values = values
        self.matched: dict[int, object] = {}  # saved node -> live object
        self.saved_of: dict[int, list[int]] = {}  # id(live object) -> saved nodes
        self.restored: set[str] = set()
        self.optimizers: list[tuple[int, object]] = []
        self._slot_tables: dict[int, dict[tuple[int, str], int]] = {}
        self._listening: set[tuple[int, int]] = set()  # (saved node, id(live object))

    # --- matching -------------------------------------------------------------------------
    def run(self) -> None:
        """Match from the root and restore everything that exists now."""
        self._match([(0, self.root)])

    def _match(self, pairs: list[tuple[int, object]]) -> None:
        assignments: list[tuple[object, dict[str, np.ndarray], list[str]]] = []
        queue = list(pairs)
        while queue:
            saved, obj = queue.pop(0)
            if saved in self.matched:
                continue
            self.matched[saved] = obj
            self.saved_of.setdefault(id(obj), []).append(saved)
            node = self.nodes[saved]
            names = node.get("tensors", {})
            if names:
                tensors = {name: self.values[key] for name, key in names.items()}
                assignments.append((obj, tensors, list(names.values())))
            queue.extend(self._child_pairs(saved, obj))
            if node.get("slots"):
                self.optimizers.append((saved, obj))
                self._listen(saved, obj, self._on_slots_changed)
        for obj, tensors, keys in assignments:
            shown = ", ".join(map(repr, keys))
            if not callable(getattr(obj, "_restore_from_tensors", None)):
                raise ValueError(
                    f"Checkpoint value {shown} of '{self.prefix}' matches a "
                    f"{type(obj).__name__}, which saves no state; the checkpoint was written "
                    "from a different object graph."
                )
            validate = getattr(obj, "_validate_restore", None)
            try:
                if callable(validate):
                    validate(tensors)
            except ValueError as exc:
                raise ValueError(
                    f"Cannot restore checkpoint value {shown} of '{self.prefix}' into "
                    f"{_label(obj)}: {exc}"
                ) from None
        for obj, tensors, keys in assignments:
            obj._restore_from_tensors(tensors)
            self.restored.update(keys)
        self._restore_existing_slots()

    def _listen(self, saved: int, obj, callback) -> None:
        key = (saved, id(obj))
        if key in self._listening:
            return
        try:
            trackable.add_listener(obj, lambda o: callback(saved, o))
        except TypeError:
            return  # a plain list or dict cannot report changes
        self._listening.add(key)

    def _child_pairs(self, saved: int, obj) -> list[tuple[int, object]]:
        wanted = self.nodes[saved].get("children", {})
        if not wanted:
            return []
        live = {escape(name): child for name, child in children_of(obj).items()}
        pairs = [(cid, live[name]) for name, cid in wanted.items() if name in live]
        missing = [cid for name, cid in wanted.items() if name not in live]
        if any(cid not in self.matched for cid in missing):
            self._listen(saved, obj, self._on_children_changed)
        return pairs

    def _on_children_changed(self, saved: int, obj) -> bool:
        self._match(self._child_pairs(saved, obj))
        done = all(cid in self.matched for cid in self.nodes[saved].get("children", {}).values())
        if done:
            self._listening.discard((saved, id(obj)))
        return done

    # --- optimizer slots ------------------------------------------------------------------
    def _slot_entry(self, opt_saved: int, variable, slot_name: str) -> int | None:
        table = self._slot_tables.get(opt_saved)
        if table is None:
            entries = self.nodes[opt_saved].get("slots", [])
            table = {(e["variable"], e["name"]): e["node"] for e in entries}
            self._slot_tables[opt_saved] = table
        for var_saved in self.saved_of.get(id(variable), []):
            node = table.get((var_saved, slot_name))
            if node is not None:
                return node
        return None

    def _restore_existing_slots(self) -> None:
        pairs = []
        for opt_saved, optimizer in self.optimizers:
            for variable, slot_name, slot in slots_of(optimizer):
                node = self._slot_entry(opt_saved, variable, slot_name)
                if node is not None and node not in self.matched:
                    pairs.append((node, slot))
        if pairs:
            self._match(pairs)

    def _on_slots_changed(self, saved: int, optimizer) -> bool:
        self._restore_existing_slots()
        done = all(entry["node"] in self.matched for entry in self.nodes[saved].get("slots", []))
        if done:
            self._listening.discard((saved, id(optimizer)))
        return done

    # --- bookkeeping for the status -------------------------------------------------------
    def unmatched_saved(self) -> list[str]:
        """Saved values not restored yet (their keys)."""
        keys = [key for n in self.nodes for key in n.get("tensors", {}).values()]
        return [k for k in keys if k not in self.restored]

    def unmatched_live(self) -> list[str]:
        """Live objects and variables under the root not matched to the checkpoint."""
        graph = walk(self.root)
        out = []
        for node, obj in enumerate(graph.objects):
            if graph.paths[node] == "save_counter":
                continue  # bookkeeping of the Checkpoint itself, not the user's state
            if node and id(obj) not in self.saved_of:
                out.append(f"{graph.paths[node]} ({_label(obj)})")
        return out


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` returns: assertions about how much was restored."""

    def __init__(self, restoration: Restoration) -> None:
        self._restoration = restoration

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Every saved value was restored and every live object matched the checkpoint.

        Raises:
            AssertionError: naming the unrestored values or the unmatched objects.
        """
        left = self._restoration.unmatched_saved()
        if left:
            raise AssertionError(
                f"Unresolved values in checkpoint '{self._restoration.prefix}': {left}. Their "
                "objects do not exist yet (build the model, or apply gradients once for "
                "optimizer slots) or not at all; use expect_partial() if that is intended."
            )
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Every object and variable under the root now has a value from the checkpoint.

        Raises:
            AssertionError: naming the live objects the checkpoint has nothing for.
        """
        extra = self._restoration.unmatched_live()
        if extra:
            raise AssertionError(
                f"Objects not found in checkpoint '{self._restoration.prefix}': {extra}. The "
                "checkpoint was saved from a different object graph (other layers or "
                "attribute names)."
            )
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        """Something besides the root was matched.

        Raises:
            AssertionError: nothing in the checkpoint matched.
        """
        if len(self._restoration.matched) <= 1:
            raise AssertionError(
                f"Nothing except the root object matched checkpoint '{self._restoration.prefix}'."
            )
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        """Declare that a partial restore is intended (simdist never warns about it)."""
        return self

    def run_restore_ops(self, session=None) -> None:
        """Nothing to run: restoring is eager."""

    def initialize_or_restore(self, session=None) -> None:
        """Nothing to run: restoring is eager."""


class InitializationOnlyStatus:
    """What ``restore(None)`` returns: nothing was restored (variables keep their values)."""

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed

    def expect_partial(self) -> InitializationOnlyStatus:
        return self

    def run_restore_ops(self, session=None) -> None:
        """Nothing to run."""

    def initialize_or_restore(self, session=None) -> None:
        """Nothing to run."""
