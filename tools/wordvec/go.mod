module github.com/groundcrew/groundcrew/tools/wordvec

go 1.26.7
