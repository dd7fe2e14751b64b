class CourseError(Exception):
    """A fault in a source file, reported as one line: `path:line: message`.

    >>> str(CourseError("lessons/a.md", "'x' is undefined", line=3))
    "lessons/a.md:3: 'x' is undefined"
    """

    def __init__(self, path, message, line=None):
        self.path, self.message, self.line = str(path), message, line
        super().__init__(str(self))

    def __str__(self):
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"
