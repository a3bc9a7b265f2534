// placeholder: schedules are implemented with issue 6
