import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DocumentsRepository } from '../index/documents.repository.js';
import type { Grade } from '../retrieval/grading.js';
import type { RetrievalHit } from '../retrieval/retrieval.service.js';

/** A file name without its extension: a document's title when it has no heading. */
export const fileTitle = (filename: string) => filename.replace(/\.[^.]+$/, '') || filename;

/**
 * What the user reads for a document: its first heading, else its file name
 * without extension. Read from the stored chunks' heading paths, so a document
 * is titled alike whichever of its passages a search retrieved.
 */
@Injectable()
export class DocumentTitles {
  private readonly documents: DocumentsRepository;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.documents = new DocumentsRepository(dataSource);
  }

  /** The title of each retrieved file (by the collection of its first hit), keyed by file name. */
  async of(sources: string[], hits: RetrievalHit[]): Promise<Map<string, string>> {
    const wanted = [...new Set(sources.filter(Boolean))].flatMap((filename) => {
      const hit = hits.find((candidate) => candidate.source === filename);
      return hit ? [{ collectionId: hit.collection_id, filename }] : [];
    });
    const headings = await this.documents.firstHeadings(wanted);
    return new Map(
      wanted.map(({ collectionId, filename }) => [
        filename,
        headings.find((row) => row.collection_id === collectionId && row.filename === filename)?.heading ?? fileTitle(filename),
      ]),
    );
  }

  /** The grade with its options labelled by their documents' titles (an option naming no file keeps its words). */
  async label<G extends Grade>(grade: G, hits: RetrievalHit[]): Promise<G> {
    if (grade.options.length === 0) return grade;
    const titles = await this.of(grade.option_sources, hits);
    const labels = grade.options.map((option, i) => titles.get(grade.option_sources[i]) ?? option);
    // Two documents under one heading ("User Manual") are told apart by their file names.
    const options = labels.map((label, i) =>
      labels.indexOf(label) !== labels.lastIndexOf(label) && grade.option_sources[i] ? `${label} (${fileTitle(grade.option_sources[i])})` : label,
    );
    return { ...grade, options };
  }
}
