package eddy

// ResetHandlers empties the registry, so that each test registers its own
// handlers. Every test that registers one must call it in t.Cleanup.
var ResetHandlers = resetHandlers
