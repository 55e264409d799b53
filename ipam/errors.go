package ipam

import (
	"errors"
	"fmt"
)

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

// ConfigError is an ErrInvalidConfig that names the object to fix, so
// that the controller can put it in that object's status.
type ConfigError struct {
	// Kind is VIPPool or L4Cluster.
	Kind string
	// Name is the object's metadata.name.
	Name string
	msg  string
}

// Error returns the message, which starts with ErrInvalidConfig's.
func (e *ConfigError) Error() string { return e.msg }

// Unwrap makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// configError formats a ConfigError about kind/name.
func configError(kind, name, format string, args ...any) error {
	return &ConfigError{Kind: kind, Name: name, msg: ErrInvalidConfig.Error() + ": " + fmt.Sprintf(format, args...)}
}
