"""User interfaces: the terminal game, the web app, rendered replays (GIF/MP4) and tile colours.

Textual, FastAPI and uvicorn come with the ``ui`` extra; Pillow with ``plot`` or ``ui``. Each module
imports its library when used, so ``import ai2048`` never needs them.
"""
