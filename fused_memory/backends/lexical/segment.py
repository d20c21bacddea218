"""A namespace's BM25 postings as immutable arrays: the base `bm25._Shard` scores from, in memory or
memory-mapped from one file, so an index kept on disk opens without reading its postings.

Why arrays: a query reads a term's postings as a slice (positions ascending, term frequencies
beside them), which the pruned top k (`topk`) and the scorer read as NumPy arrays anyway; an index
of Python dicts and sets had to be rebuilt document by document on every open and held ~1 KB a
memory in the process. Why one immutable file per namespace: the file is written once, to a
temporary name, flushed and renamed over the old one (`write`), so a crash leaves the old file or
the new one, never half of one; writes since live beside it (`bm25._Shard`'s overlay, and for a
stored index the write log in `stored`) until the next merge folds them in (`SegmentBuilder`).

Layout of a file: `MAGIC`, the header's length (8 bytes, little-endian), the header (JSON: the
format, the namespace, the index's parameters, tokenizer and type table, the write sequence number
folded in, counts, each array's offset, dtype, length and CRC-32, and the CRC-32 of the header
itself), then the arrays, each 64-byte aligned:

    terms_blob, terms_off      the vocabulary, sorted, UTF-8 (term i is blob[off[i]:off[i+1]])
    term_hash, term_order      the terms' 64-bit hashes sorted, and the term each belongs to
    post_off, post_doc, post_tf  the postings: term i's documents are post_doc[post_off[i]:post_off[i+1]],
                               ascending, with their term frequencies (float32 when every one is
                               exact in float32, else float64: scores stay rank-bm25's to the bit)
    doc_len, type_code         per document: BM25 length, memory type (its code in the type table)
    doc_off, doc_term          per document, its terms (what a delete must take back)
    ids_blob, ids_off          per document, its memory id
    id_hash, id_order          the ids' 64-bit hashes sorted, and the document each belongs to

A file is refused (`SegmentError`, and the index rebuilds it from the payloads) when its magic,
format, parameters, tokenizer or type table differ from this index's, its size is not the header's,
or a checksum fails. Why checksums: a file damaged in place (same size, bytes changed by a disk, a
copy or a hand) would otherwise be served, as wrong rankings or an IndexError at query time. They
are verified when a namespace is first mapped (`load_segment`), which reads the whole file once:
a few milliseconds at 5k memories (CRC-32 runs at about a gigabyte a second), paid on first use,
not on open; not on the file a merge just wrote from memory.
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import os
import zlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import FusedMemoryError
from ...text import tokenize

__all__ = ["Segment", "SegmentBuilder", "SegmentError", "SegmentParams", "FORMAT", "MAGIC", "term_hash",
           "tokenizer_fingerprint", "write_segment", "load_segment"]

#: The first bytes of a segment file.
MAGIC = b"FMBM25\x00\x01"
#: Bumped whenever the layout or the meaning of a field changes: an older file is rebuilt, not read.
#: 2: a CRC-32 per array and of the header; the type table in the parameters.
FORMAT = 2
_ALIGN = 64
#: A text exercising every rule of `text.tokenize` (stopwords, stemming, possessives, joined tokens,
#: identifiers, accents): its tokens' hash stands for the tokenizer, so postings written by a
#: tokenizer that splits or stems otherwise are rebuilt rather than searched with today's queries.
_PROBE = ("The users' E-47821 badges were running faster; JIRA-9921 tracks v2.10.3 on db-07.prod at "
          "10.0.0.1 - Zoë's café didn't re-open, well-known meetings happened quickly")


class SegmentError(FusedMemoryError):
    """A segment file this index cannot read as it is: missing, truncated, of another format or
    written with other parameters. The index is rebuilt from the payloads, never searched."""


def tokenizer_fingerprint() -> str:
    """A short hash of what `tokenize` makes of `_PROBE`."""
    return hashlib.blake2b("\x1f".join(tokenize(_PROBE)).encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class SegmentParams:
    """What decides a document's terms, weights and stored values: a segment written under others
    is not this index's (`predicate_weight` and `context_weight` are `BM25Index`'s; k1, b and
    epsilon apply at query time, so they are not part of it). `types` is the type table, the memory
    types in the order their codes number them (`columns.TYPE_CODE`): the `type_code` array means
    nothing under another order, so a type added or reordered rebuilds the files."""

    predicate_weight: int
    context_weight: float
    tokenizer: str
    types: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"predicate_weight": self.predicate_weight, "context_weight": self.context_weight,
                "tokenizer": self.tokenizer, "types": list(self.types)}


def term_hash(text: str) -> int:
    """A term's or memory id's 64-bit hash (signed, as the int64 arrays hold it): stable across
    processes, unlike `hash`."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def _hashes(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter((term_hash(t) for t in texts), dtype=np.int64, count=len(texts))


def _blob(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    off = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum(np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded)), out=off[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), off


_EMPTY_I8 = np.zeros(0, dtype=np.int8)
_EMPTY_I32 = np.zeros(0, dtype=np.int32)
_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_EMPTY_F64 = np.zeros(0, dtype=np.float64)
_ZERO_OFF = np.zeros(1, dtype=np.int64)

_SECTIONS = ("terms_blob", "terms_off", "term_hash", "term_order", "post_off", "post_doc", "post_tf", "doc_len",
             "type_code", "doc_off", "doc_term", "ids_blob", "ids_off", "id_hash", "id_order")


class Segment:
    """Immutable postings of one namespace (module docstring). Arrays may be views of a mapped file:
    never written to. `seq` is the last write-log sequence number folded in (0: none)."""

    __slots__ = ("seq", "docs", "terms", "total_len", "_blob", "_ids_blob", *_SECTIONS)

    def __init__(self, arrays: Mapping[str, np.ndarray], seq: int = 0, total_len: float | None = None) -> None:
        for name in _SECTIONS:
            setattr(self, name, arrays[name])
        self.seq = int(seq)
        #: The documents' summed length, correctly rounded (`math.fsum`), so it does not depend on
        #: the order the documents were written in.
        self.total_len = math.fsum(np.asarray(self.doc_len).tolist()) if total_len is None else float(total_len)
        self.docs = len(self.doc_len)
        self.terms = len(self.terms_off) - 1
        # bytes views of the two blobs: slicing a memoryview is what a lookup does most
        self._blob = memoryview(self.terms_blob.data)
        self._ids_blob = memoryview(self.ids_blob.data)

    terms_blob: np.ndarray
    terms_off: np.ndarray
    term_hash: np.ndarray
    term_order: np.ndarray
    post_off: np.ndarray
    post_doc: np.ndarray
    post_tf: np.ndarray
    doc_len: np.ndarray
    type_code: np.ndarray
    doc_off: np.ndarray
    doc_term: np.ndarray
    ids_blob: np.ndarray
    ids_off: np.ndarray
    id_hash: np.ndarray
    id_order: np.ndarray

    @classmethod
    def empty(cls) -> Segment:
        return cls({"terms_blob": _EMPTY_U8, "terms_off": _ZERO_OFF, "term_hash": _EMPTY_I64,
                    "term_order": _EMPTY_I32, "post_off": _ZERO_OFF, "post_doc": _EMPTY_I32, "post_tf": _EMPTY_F64,
                    "doc_len": _EMPTY_F64, "type_code": _EMPTY_I8, "doc_off": _ZERO_OFF, "doc_term": _EMPTY_I32,
                    "ids_blob": _EMPTY_U8, "ids_off": _ZERO_OFF, "id_hash": _EMPTY_I64, "id_order": _EMPTY_I32})

    # ------------------------------------------------------------ lookups
    def term_at(self, i: int) -> str:
        off = self.terms_off
        return bytes(self._blob[int(off[i]):int(off[i + 1])]).decode("utf-8", "surrogatepass")

    def term_index(self, term: str) -> int | None:
        """The term's index in the vocabulary, or None: a binary search of its hash (hashes that
        collide are told apart by the term itself)."""
        if not self.terms:
            return None
        hashes = self.term_hash
        h = term_hash(term)
        at = int(np.searchsorted(hashes, h))
        while at < len(hashes) and int(hashes[at]) == h:
            i = int(self.term_order[at])
            if self.term_at(i) == term:
                return i
            at += 1
        return None

    def term_indices(self, terms: Sequence[str]) -> list[int | None]:
        """`term_index` of each term, the binary searches in one NumPy call."""
        if not self.terms or not terms:
            return [None] * len(terms)
        hs = _hashes(terms)
        ats = np.searchsorted(self.term_hash, hs).tolist()
        out: list[int | None] = []
        n = len(self.term_hash)
        for term, h, at in zip(terms, hs.tolist(), ats, strict=True):
            found = None
            while at < n and int(self.term_hash[at]) == h:
                i = int(self.term_order[at])
                if self.term_at(i) == term:
                    found = i
                    break
                at += 1
            out.append(found)
        return out

    def df(self, i: int) -> int:
        return int(self.post_off[i + 1] - self.post_off[i])

    def posting(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Term i's documents (ascending) and its frequency in each."""
        a, b = int(self.post_off[i]), int(self.post_off[i + 1])
        return self.post_doc[a:b], self.post_tf[a:b]

    def doc_terms(self, pos: int) -> list[str]:
        """The terms of document `pos` (what deleting it takes back)."""
        a, b = int(self.doc_off[pos]), int(self.doc_off[pos + 1])
        return [self.term_at(i) for i in self.doc_term[a:b].tolist()]

    def memory_id(self, pos: int) -> str:
        off = self.ids_off
        return bytes(self._ids_blob[int(off[pos]):int(off[pos + 1])]).decode("utf-8", "surrogatepass")

    def position_of(self, memory_id: str) -> int | None:
        """The document holding `memory_id`, or None."""
        if not self.docs:
            return None
        h = term_hash(memory_id)
        hashes = self.id_hash
        at = int(np.searchsorted(hashes, h))
        while at < len(hashes) and int(hashes[at]) == h:
            pos = int(self.id_order[at])
            if self.memory_id(pos) == memory_id:
                return pos
            at += 1
        return None

    def df_histogram(self) -> dict[int, int]:
        """Number of terms per document frequency."""
        if not self.terms:
            return {}
        values, counts = np.unique(np.diff(self.post_off), return_counts=True)
        return {int(v): int(c) for v, c in zip(values.tolist(), counts.tolist(), strict=True) if v > 0}

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in _SECTIONS}


class SegmentBuilder:
    """The next segment: the live documents of a base (in their order) followed by new ones.

    New documents are kept compactly (terms numbered in a vocabulary of their own, postings in
    typed arrays), so a rebuild of a million memories does not hold a dict per document."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._terms: list[str] = []
        self._doc: array[int] = array("q")   # per new posting: its new document (0-based among new ones)
        self._term: array[int] = array("q")  # ... its term in `_vocab`
        self._tf: array[float] = array("d")
        self._len: array[float] = array("d")
        self._type: array[int] = array("b")
        self._ids: list[str] = []

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, memory_id: str, freqs: Mapping[str, float], length: float, type_code: int) -> None:
        d = len(self._ids)
        vocab = self._vocab
        for term, tf in sorted(freqs.items()):
            t = vocab.get(term)
            if t is None:
                t = vocab[term] = len(self._terms)
                self._terms.append(term)
            self._doc.append(d)
            self._term.append(t)
            self._tf.append(float(tf))
        self._len.append(float(length))
        self._type.append(int(type_code))
        self._ids.append(memory_id)

    def build(self, base: Segment | None = None, live: np.ndarray | None = None, seq: int = 0) -> Segment:
        """The base's documents where `live` (all when None), renumbered in order, then the new ones."""
        base = base if base is not None else Segment.empty()
        keep = np.ones(base.docs, dtype=bool) if live is None else np.asarray(live[:base.docs], dtype=bool)
        n_base = int(keep.sum())
        remap = np.full(base.docs, -1, dtype=np.int64)
        remap[keep] = np.arange(n_base, dtype=np.int64)
        n_docs = n_base + len(self._ids)

        # the vocabulary: base terms still held by a live document, and the new ones, sorted
        base_terms = [base.term_at(i) for i in range(base.terms)]
        base_tix = np.repeat(np.arange(base.terms, dtype=np.int64), np.diff(base.post_off))
        base_live = keep[base.post_doc] if len(base.post_doc) else np.zeros(0, dtype=bool)
        held = np.zeros(base.terms, dtype=bool)
        held[base_tix[base_live]] = True
        words = sorted({t for t, h in zip(base_terms, held.tolist(), strict=True) if h} | set(self._terms))
        index = {t: i for i, t in enumerate(words)}
        base_map = np.fromiter((index.get(t, -1) for t in base_terms), dtype=np.int64, count=base.terms)
        new_map = np.fromiter((index[t] for t in self._terms), dtype=np.int64, count=len(self._terms))

        # postings: term, document, tf, sorted by (term, document); the base's are in that order already
        new_doc = np.frombuffer(self._doc, dtype=np.int64) + n_base if len(self._doc) else _EMPTY_I64
        new_term = new_map[np.frombuffer(self._term, dtype=np.int64)] if len(self._term) else _EMPTY_I64
        new_tf = np.frombuffer(self._tf, dtype=np.float64) if len(self._tf) else _EMPTY_F64
        terms = np.concatenate([base_map[base_tix[base_live]], new_term])
        docs = np.concatenate([remap[base.post_doc[base_live]], new_doc])
        tfs = np.concatenate([np.asarray(base.post_tf[base_live], dtype=np.float64), new_tf])
        order = np.argsort(terms * max(1, n_docs) + docs, kind="stable")
        post_doc = docs[order].astype(np.int32)
        post_tf = tfs[order]
        tf32 = post_tf.astype(np.float32)
        if np.array_equal(tf32.astype(np.float64), post_tf):
            post_tf = tf32  # exact: half the bytes
        post_off = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(words)), out=post_off[1:])

        # per document: its terms (forward), length, type, id
        fwd_docs = docs  # unsorted: sort by (document, term)
        fwd = np.argsort(fwd_docs * max(1, len(words)) + terms, kind="stable")
        doc_term = terms[fwd].astype(np.int32)
        doc_off = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(np.bincount(fwd_docs, minlength=n_docs), out=doc_off[1:])
        doc_len = np.concatenate([np.asarray(base.doc_len[keep], dtype=np.float64),
                                  np.frombuffer(self._len, dtype=np.float64) if len(self._len) else _EMPTY_F64])
        type_code = np.concatenate([np.asarray(base.type_code[keep], dtype=np.int8),
                                    np.frombuffer(self._type, dtype=np.int8) if len(self._type) else _EMPTY_I8])
        id_lens = np.diff(base.ids_off)
        base_blob = np.asarray(base.ids_blob)[np.repeat(keep, id_lens)] if len(base.ids_blob) else _EMPTY_U8
        new_blob, new_off = _blob(self._ids)
        ids_blob = np.concatenate([base_blob, new_blob])
        ids_off = np.concatenate([[0], np.cumsum(id_lens[keep]), new_off[1:] + int(id_lens[keep].sum())]
                                 ).astype(np.int64)
        # the id hashes: the base's (sorted) of the live documents, with the new ones
        base_h = np.asarray(base.id_hash)
        base_o = np.asarray(base.id_order, dtype=np.int64)
        alive = keep[base_o] if len(base_o) else np.zeros(0, dtype=bool)
        id_hash = np.concatenate([base_h[alive], _hashes(self._ids)])
        id_pos = np.concatenate([remap[base_o[alive]], np.arange(n_base, n_docs, dtype=np.int64)])
        by_hash = np.argsort(id_hash, kind="stable")
        terms_blob, terms_off = _blob(words)
        t_hash = _hashes(words)
        t_order = np.argsort(t_hash, kind="stable")
        return Segment({"terms_blob": terms_blob, "terms_off": terms_off, "term_hash": t_hash[t_order],
                        "term_order": t_order.astype(np.int32), "post_off": post_off, "post_doc": post_doc,
                        "post_tf": post_tf, "doc_len": doc_len, "type_code": type_code, "doc_off": doc_off,
                        "doc_term": doc_term, "ids_blob": ids_blob, "ids_off": ids_off,
                        "id_hash": id_hash[by_hash], "id_order": id_pos[by_hash].astype(np.int32)}, seq)


# ---------------------------------------------------------------- files
def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _header_crc(header: Mapping[str, Any]) -> int:
    """The CRC-32 of the header's fields but its own (`check`), in a canonical form: a number
    changed in place (the sequence number folded in, a count, an offset) is caught like an array."""
    return zlib.crc32(json.dumps({k: v for k, v in header.items() if k != "check"}, sort_keys=True).encode())


def write_segment(segment: Segment, path: Path, namespace: str, params: SegmentParams) -> int:
    """Write `segment` to `path` atomically (a temporary file, fsync, rename, fsync of the folder);
    returns the file's size."""
    arrays = {name: np.ascontiguousarray(arr) for name, arr in segment.arrays().items()}
    layout: dict[str, list[Any]] = {}
    offset = 0
    for name in _SECTIONS:
        arr = arrays[name]
        layout[name] = [offset, arr.dtype.str, int(arr.shape[0]), zlib.crc32(arr.data)]
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    header: dict[str, Any] = {"format": FORMAT, "namespace": namespace, "params": params.as_json(),
                              "seq": segment.seq, "docs": segment.docs, "terms": segment.terms,
                              "total_len": segment.total_len,
                              "postings": int(len(segment.post_doc)), "sections": layout}
    # the data starts after the header, padded to the alignment; offsets above are relative to it
    probe = json.dumps({**header, "data": 0, "size": 0, "check": 0}).encode()
    start = -(-(len(MAGIC) + 8 + len(probe) + 64) // _ALIGN) * _ALIGN
    header["data"], header["size"] = start, start + offset
    header["check"] = _header_crc(header)
    text = json.dumps(header).encode()
    if len(MAGIC) + 8 + len(text) > start:
        raise SegmentError("segment header outgrew its room")  # cannot happen: 64 bytes of slack
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(MAGIC + len(text).to_bytes(8, "little") + text)
        fh.write(b"\0" * (start - len(MAGIC) - 8 - len(text)))
        for name in _SECTIONS:
            arr = arrays[name]
            fh.write(arr.tobytes())
            fh.write(b"\0" * (-(-arr.nbytes // _ALIGN) * _ALIGN - arr.nbytes))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    return int(header["size"])


def load_segment(path: Path, namespace: str, params: SegmentParams, *, verify: bool = True) -> Segment:
    """Map a segment file; `SegmentError` says why it cannot be used (module docstring). The arrays
    are views of the mapping. With `verify`, every array's checksum is compared (the whole file is
    read once); without, only the header is read: for the file this process has just written."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < len(MAGIC) + 8:
                raise SegmentError(f"{path.name} is truncated ({size} bytes)")
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise SegmentError(f"{path.name} is missing") from None
    except (OSError, ValueError) as exc:
        raise SegmentError(f"{path.name} cannot be read: {exc}") from None
    if mm[:len(MAGIC)] != MAGIC:
        raise SegmentError(f"{path.name} is not a postings file of this format (magic {bytes(mm[:8])!r})")
    n = int.from_bytes(mm[len(MAGIC):len(MAGIC) + 8], "little")
    try:
        header = json.loads(mm[len(MAGIC) + 8:len(MAGIC) + 8 + n])
        if header["format"] != FORMAT:
            raise SegmentError(f"{path.name} has format {header['format']!r}, this version reads {FORMAT}")
        if header["size"] != size:
            raise SegmentError(f"{path.name} is truncated: {size} bytes, its header says {header['size']}")
        if header["namespace"] != namespace:
            raise SegmentError(f"{path.name} holds namespace {header['namespace']!r}, not {namespace!r}")
        if header.get("check") != _header_crc(header):
            raise SegmentError(f"{path.name} is damaged: its header fails its checksum")
        if header["params"] != params.as_json():
            raise SegmentError(f"{path.name} was written with {header['params']}, this index uses {params.as_json()}")
        start = int(header["data"])
        arrays = {}
        for name in _SECTIONS:
            offset, dtype, count, crc = header["sections"][name]
            arrays[name] = np.frombuffer(mm, dtype=np.dtype(dtype), count=int(count), offset=start + int(offset))
            if verify and zlib.crc32(arrays[name].data) != crc:
                raise SegmentError(f"{path.name} is damaged: its {name} array fails its checksum")
        segment = Segment(arrays, int(header["seq"]), float(header["total_len"]))
    except SegmentError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise SegmentError(f"{path.name} has a damaged header: {exc}") from None
    if segment.docs != header["docs"] or len(segment.doc_off) != segment.docs + 1 \
            or len(segment.post_doc) != int(segment.post_off[-1]) or len(segment.type_code) != segment.docs:
        raise SegmentError(f"{path.name} is inconsistent with its header")
    return segment
