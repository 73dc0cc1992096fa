# jobgate: one image for the gateway, observers and the mock provider.
FROM python:3.11-slim
WORKDIR /srv/jobgate
COPY pyproject.toml README.md alembic.ini ./
COPY alembic ./alembic
COPY app ./app
# Editable install keeps alembic/ next to the package (`jobgate migrate` finds it there).
RUN pip install --no-cache-dir -e .
ENV JOBGATE_DATA_DIR=/var/lib/jobgate
RUN useradd --system --home /var/lib/jobgate jobgate && mkdir -p /var/lib/jobgate \
    && chown jobgate /var/lib/jobgate
USER jobgate
EXPOSE 8080 8081
CMD ["jobgate", "serve", "--host", "0.0.0.0", "--port", "8080"]
