module github.com/eddy-streams/eddy/sdk/go

go 1.26
