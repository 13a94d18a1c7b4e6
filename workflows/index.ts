// Every workflow the worker registers on task queue `pixflow`.
export {};
