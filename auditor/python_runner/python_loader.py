"""The runner's DataLoader cells (concatenated after python_randomness.py, see CMakeLists.txt).

A callable that makes a torch.utils.data.DataLoader, or any other iterable of batches, is a loader cell:
each run makes the loader again (the factory is the step), iterates its epochs of at most so many
batches, and digests every batch in order (outputs epochE.batchB). The runner rebuilds a DataLoader
with its own pieces around the user's: a batch sampler that records each batch's sample indices, a
collate_fn that says which worker made a batch and which random sources the worker had drawn from, a
worker_init_fn that digests those sources' states as the worker starts (after the user's own), and the
recipe's settings (loader_generator, loader_seed_workers, loader_workers). The observation's `loader`
holds the first digested run's batches (indices, worker, a digest per sample), which is what tells
an order that differs from a sample whose content differs, and the workers' starting states, which tell
workers that share one random stream.
"""
import multiprocessing  # noqa: E402

import torch.utils.data as data_utils  # noqa: E402

BATCH_KEY = "\x00repro-audit batch"
MAX_INDICES = 256     # kept per batch
MAX_SAMPLE_DIGESTS = 64
WORKER_STATE = {}     # in a loader's worker process: its random sources and their states when it started


def is_loader(value):
    """A DataLoader, or an iterable of batches that is no result (no tensor or container of them) and no step."""
    if isinstance(value, data_utils.DataLoader):
        return True
    if callable(value) or isinstance(value, (torch.Tensor, dict, list, tuple, set, frozenset, *SCALARS)):
        return False
    return hasattr(value, "__iter__") and not dataclasses.is_dataclass(value)


def worker_sources(dataset):
    """Python's and NumPy's generators and those the dataset holds, in a worker (torch's own are seeded
    per worker by the DataLoader itself)."""
    found = [source for source in global_sources() if not source.seeded_each_run]
    known = {id(source.value): source for source in found}
    return found + walk_sources([("dataset", dataset)], known)


def loader_worker_init(user_init, seed_workers, worker_id):
    if seed_workers:  # the documented seed_worker
        worker_seed = torch.initial_seed() % 2 ** 32
        random.seed(worker_seed)
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is not None:
            numpy_random.seed(worker_seed)
    if user_init is not None:
        user_init(worker_id)
    info = data_utils.get_worker_info()
    sources = worker_sources(info.dataset)
    WORKER_STATE.update(sources=sources, sent=False,
                        start={source.name: state_digest(source.kind, source.value) for source in sources})


def loader_collate(user_collate, samples):
    batch = user_collate(samples)
    info = data_utils.get_worker_info()
    if info is None or "sources" not in WORKER_STATE:
        return batch
    facts = {"worker": info.id, "drawn": [source.name for source in WORKER_STATE["sources"]
                                          if state_digest(source.kind, source.value) != WORKER_STATE["start"][source.name]]}
    if not WORKER_STATE["sent"]:
        facts["start"] = WORKER_STATE["start"]
        WORKER_STATE["sent"] = True
    return {BATCH_KEY: batch, "facts": facts}


class RecordingBatchSampler:
    """The loader's batch sampler, recording each batch's indices in the order it gives them."""

    def __init__(self, sampler):
        self.sampler, self.epochs = sampler, []  # each epoch's batches, as many as the loader fetched

    def __iter__(self):
        batches = []
        self.epochs.append(batches)
        for indices in self.sampler:
            batches.append([int(index) for index in indices][:MAX_INDICES])
            yield indices

    def __len__(self):
        return len(self.sampler)


def rebuilt(loader, settings, seed):
    """The user's DataLoader with the runner's pieces and the cell's recipe settings; (loader, sampler)."""
    workers = settings.get("loader_workers", "inherit")
    workers = loader.num_workers if workers in ("inherit", "n/a") else int(workers)
    generator = loader.generator
    if settings.get("loader_generator", "off") == "on":
        generator = torch.Generator().manual_seed(seed)
    batch_sampler = loader.batch_sampler
    if isinstance(loader.dataset, data_utils.IterableDataset) or batch_sampler is None:
        recording = None
    else:
        if generator is not loader.generator and isinstance(loader.sampler, data_utils.RandomSampler):
            sampler = data_utils.RandomSampler(loader.dataset, replacement=loader.sampler.replacement,
                                               num_samples=loader.sampler._num_samples, generator=generator)
            batch_sampler = data_utils.BatchSampler(sampler, loader.batch_size, loader.drop_last)
        recording = RecordingBatchSampler(batch_sampler)
    options = dict(num_workers=workers, collate_fn=loader.collate_fn, pin_memory=loader.pin_memory,
                   timeout=loader.timeout if workers else 0, generator=generator, worker_init_fn=loader.worker_init_fn)
    seed_workers = settings.get("loader_seed_workers", "off") == "on"
    # The runner's pieces reach a worker by fork; spawned workers would have to import them from the runner,
    # which is no module (they get the loader's own pieces, and the report no worker facts).
    context = loader.multiprocessing_context
    method = context.get_start_method() if context is not None else multiprocessing.get_start_method()
    if workers == 0 or method == "fork":
        options.update(collate_fn=functools.partial(loader_collate, loader.collate_fn),
                       worker_init_fn=functools.partial(loader_worker_init, loader.worker_init_fn, seed_workers))
    elif seed_workers:
        raise CellUnsupported(f"loader_seed_workers=on: the loader starts its workers by {method}, which the "
                              "runner's worker_init_fn cannot reach (it needs fork)")
    if workers:
        options.update(multiprocessing_context=loader.multiprocessing_context, prefetch_factor=loader.prefetch_factor)
    if recording is not None:
        options["batch_sampler"] = recording
    else:
        options.update(batch_size=loader.batch_size, drop_last=loader.drop_last)
    return data_utils.DataLoader(loader.dataset, **options), recording


def sample_digests(batch):
    """A short digest of each of the first samples of a batch: its tensors' rows at that index."""
    tensors = named_tensors(batch, "batch", [])
    if not tensors or any(tensor.dim() == 0 or tensor.shape[0] != tensors[0][1].shape[0] for _, tensor in tensors):
        return []
    return [digest_text("".join(digest(tensor[index]) for _, tensor in tensors))[:16]
            for index in range(min(tensors[0][1].shape[0], MAX_SAMPLE_DIGESTS))]


class LoaderStep:
    """A loader cell's step: makes the loader, iterates it, returns its batches by place."""

    def __init__(self, factory, seed, device, settings, spec):
        self.factory, self.seed, self.device, self.settings = factory, seed, device, settings
        self.epochs = int(spec.get("loader_epochs", 2))
        self.batches = int(spec.get("loader_batches", 10))
        self.last = None  # the last run's batches and what the runner's pieces said of them

    def __call__(self):
        made = call_with(self.factory, self.seed, self.device)
        if not is_loader(made):
            raise CellError(f"the callable made a loader once and then a {type(made).__name__}: it must make one each call")
        loader, recording = made, None
        if isinstance(made, data_utils.DataLoader):
            loader, recording = rebuilt(made, self.settings, self.seed)
        result, kept = {}, []
        for epoch in range(self.epochs):
            iterator = iter(loader)
            try:
                for index in range(self.batches):
                    try:
                        item = next(iterator)
                    except StopIteration:
                        break
                    facts = {}
                    if isinstance(item, dict) and BATCH_KEY in item:
                        item, facts = item[BATCH_KEY], item["facts"]
                    result[f"epoch{epoch}.batch{index}"] = item
                    kept.append({"epoch": epoch, "batch": index, "facts": facts, "value": item})
            finally:
                shutdown = getattr(iterator, "_shutdown_workers", None)
                if shutdown is not None:
                    shutdown()  # its worker processes end here, not when the garbage collector gets to them
                del iterator
        if not result:
            raise CellError(f"the loader yielded no batches in {self.epochs} epoch(s): there is nothing to digest")
        if not named_tensors(result, "output", []):
            first = next(iter(result.values()))
            raise CellError(f"the loader's batches hold no tensors (the first is a {type(first).__name__}): a "
                            "DataLoader cell digests the tensors its batches hold")
        self.last = (kept, recording.epochs if recording is not None else [], loader)
        return result

    def observation(self):
        """The last run's batches: indices, the worker that made each, a digest per sample; the workers'
        random sources as they started, and those each worker drew from."""
        kept, epochs, loader = self.last
        batches, workers, drawn = [], {}, {}
        for entry in kept:
            batch = {"epoch": entry["epoch"], "batch": entry["batch"], "samples": sample_digests(entry["value"])}
            if entry["epoch"] < len(epochs) and entry["batch"] < len(epochs[entry["epoch"]]):
                batch["indices"] = epochs[entry["epoch"]][entry["batch"]]
            facts = entry["facts"]
            if "worker" in facts:
                batch["worker"] = facts["worker"]
                if "start" in facts:
                    workers[str(facts["worker"])] = facts["start"]
                drawn.setdefault(str(facts["worker"]), set()).update(facts.get("drawn", []))
            batches.append(batch)
        found = {"batches": batches, "epochs": self.epochs, "batches_per_epoch": self.batches,
                 "num_workers": getattr(loader, "num_workers", 0)}
        if workers:
            found["worker_sources"] = [{"worker": int(worker), "start": start, "drawn": sorted(drawn.get(worker, ()))}
                                       for worker, start in sorted(workers.items())]
        return found
