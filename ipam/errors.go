package ipam

import "errors"

// Errors the allocator returns, wrapped with details. Callers tell them
// apart with errors.Is to choose the Event reason.
var (
	// ErrExhausted means no address is free where the request allows.
	ErrExhausted = errors.New("no free address")
	// ErrInUse means the requested address belongs to another Service.
	ErrInUse = errors.New("address already assigned to another Service")
	// ErrNotInPool means the requested address, pool or environment does
	// not exist or does not match the rest of the request.
	ErrNotInPool = errors.New("request does not match any pool")
	// ErrInvalidConfig means the pools and L4 clusters are inconsistent.
	ErrInvalidConfig = errors.New("invalid VIP pool configuration")
)
