module github.com/flintboot/flint

go 1.26.8

require (
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/vincent-petithory/dataurl v1.0.0
)
