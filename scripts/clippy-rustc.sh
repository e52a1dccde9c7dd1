#!/bin/sh
# The rustc of the workspace's own crates during `make test` (RUSTC_WORKSPACE_WRAPPER): clippy's
# driver, which compiles exactly as rustc does and lints on the way, with every warning an error.
# Dependencies are compiled once, by rustc, and shared with the build: no second pass of
# `cargo clippy` over them.
case " $* " in
  *" --crate-name "*) exec clippy-driver "$@" -D warnings ;;
  *) exec clippy-driver "$@" ;;
esac
