//go:build !postgres

package cache

// postgresBackend is nil without the build tag "postgres": the shared
// tests then run against SQLite only.
var postgresBackend *backend
