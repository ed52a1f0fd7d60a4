module github.com/eddy-streams/eddy/guests/go

go 1.26

require github.com/eddy-streams/eddy/sdk/go v0.0.0

replace github.com/eddy-streams/eddy/sdk/go => ../../sdk/go
