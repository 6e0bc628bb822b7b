namespace cohort::model {}
