"""The student's loop: ``ol start`` (the stubs, ``stubs.py``) and ``ol check`` (one run of a module's
catalog on a workspace, the diagnosis of its failures and the ``.ol/passes.json`` store,
``engine.py``), above the engine they run on."""
