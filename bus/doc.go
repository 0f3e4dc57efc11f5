// Package bus is graphfed's transport: the embedded NATS server, client
// connections, subject names, the versioned msgpack envelope and its typed
// bodies, validation of everything received, and the Transport interface
// with a NATS implementation and an in-memory double for deterministic
// simulation.
//
// Subjects follow gf.<job>.<kind>[.<from>[.<to>]]; ids match [a-z0-9-]{1,64}.
// Float vectors travel as one little-endian byte blob, never as per-element
// msgpack floats.
package bus
